import Foundation
import PomodoroNet
import PomodoroTestSupport
import Testing

/// Request heads the library cannot take: each gets a status line, never a bare close, and the server goes on
/// serving.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct BadRequestTests {
    @Test func aRequestLineTooLongIsAnswered414() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        let long = String(repeating: "a", count: 5000)
        let json = #"{"error":{"code":"bad_request","message":"request line too long"}}"#
        for (target, body) in [("/api/rooms/\(long)/stats", json), ("/api/rooms/x/stats?days=\(long)", json),
                               ("/r/\(long)", "request line too long\n")] {
            let reply = try RawHTTP.closing("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n", port: server.port)
            #expect(reply.statusLine == "HTTP/1.1 414 URI Too Long", "\(target.prefix(20))…")
            #expect(reply.body == body, "in the shape of the path's errors")
        }
        #expect(server.delegate.next(timeout: 0.2) == nil, "refused heads never reach the delegate")
        #expect(try RawHTTP.get("/api/x", port: server.port).text == "ok")
    }

    @Test func aNULInTheTargetIsAnswered400() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        for target in ["/api/rooms/secret%00/stats", "/api/rooms/x/stats?name=a%00b"] {
            let reply = try RawHTTP.closing("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n", port: server.port)
            #expect(reply.statusLine == "HTTP/1.1 400 Bad Request", "\(target)")
        }
        #expect(server.delegate.next(timeout: 0.2) == nil)
        #expect(try RawHTTP.get("/api/x", port: server.port).text == "ok")
    }

    @Test func aHeadTooLargeIsAnswered431() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        let big = "X-Big: " + String(repeating: "b", count: 5000) + "\r\n"
        let many = (1...60).map { "X-H\($0): v\r\n" }.joined()
        for headers in [big, many] {
            let reply = try RawHTTP.closing("GET /api/x HTTP/1.1\r\nHost: x\r\n\(headers)\r\n", port: server.port)
            #expect(reply.statusLine == "HTTP/1.1 431 Request Header Fields Too Large")
        }
        let query = (0...HTTPRequest.maxQueryParameters * 4).map { "k\($0)" }.joined(separator: "&")
        let pieces = try RawHTTP.closing("GET /api/x?\(query) HTTP/1.1\r\nHost: x\r\n\r\n", port: server.port)
        #expect(pieces.statusLine == "HTTP/1.1 400 Bad Request")
        #expect(server.delegate.next(timeout: 0.2) == nil)
        #expect(try RawHTTP.get("/api/x", port: server.port).text == "ok")
    }

    /// A later request on a kept-alive connection is read by the library straight away: the same heads get the
    /// same answers.
    @Test func laterRequestsOnAKeptAliveConnectionToo() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        let long = String(repeating: "a", count: 5000)
        let cases = [
            ("GET /api/rooms/secret%00/stats HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 Bad Request"),
            ("GET /api/x HTTP/1.1\r\nHost: x\r\nX-Big: \(long)\r\n\r\n", "HTTP/1.1 431 Request Header Fields Too Large"),
            ("GET /api/\(long) HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 414 URI Too Long"),
        ]
        for (request, statusLine) in cases {
            let connection = try RawHTTP(port: server.port)
            #expect(try connection.exchange("GET /api/first HTTP/1.1\r\nHost: x\r\n\r\n").text == "ok")
            connection.send(request)
            let reply = RawHTTP.Closing(connection.readToEnd())
            #expect(reply.statusLine == statusLine)
        }
        #expect(try RawHTTP.get("/api/x", port: server.port).text == "ok")
    }

    /// A body the library would misread (its Content-Length taken by `atoll`, a chunked body as plain bytes) is
    /// refused before any of it is read: a JSON error, then the close; what followed the head is never taken for
    /// another request.
    @Test func aBodyThatCannotBeReadIsRefusedAndTheConnectionClosed() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        let body = #"{"type":"start"}"#
        let chunked = "10\r\n\(body)\r\n0\r\n\r\n"
        let post = "POST /api/rooms/x/commands HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n"
        let cases = [
            (post + "Transfer-Encoding: chunked\r\n\r\n" + chunked, 411,
             "a request body needs a Content-Length; Transfer-Encoding (chunked) is not read"),
            (post + "Transfer-Encoding: chunked\r\n\r\n" + String(repeating: "x", count: 20_000), 411,
             "a request body needs a Content-Length; Transfer-Encoding (chunked) is not read"),
            (post + "Content-Length: 16\r\nTransfer-Encoding: chunked\r\n\r\n" + body, 400,
             "Transfer-Encoding and Content-Length together"),
            (post + "Content-Length: abc\r\n\r\n" + body, 400, "Content-Length must be one decimal number of bytes"),
            // Read by the library as 1: the rest of the body would have been a second request.
            (post + "Content-Length: 1e3\r\n\r\nGET /api/smuggled HTTP/1.1\r\nHost: x\r\n\r\n", 400,
             "Content-Length must be one decimal number of bytes"),
            (post + "Content-Length: 99999999999999999999\r\n\r\n" + body, 400, "Content-Length too large"),
            (post + "Content-Length: 16\r\nContent-Length: 3\r\n\r\n" + body, 400, "Content-Length sent more than once"),
            (post + "Content-Length: 16\r\nContent-Length: 16\r\n\r\n" + body, 400, "Content-Length sent more than once"),
            ("GET /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400,
             "Content-Length must be one decimal number of bytes"),
        ]
        for (request, status, message) in cases {
            let connection = try RawHTTP(port: server.port)
            let reply = try connection.exchange(request)
            #expect(reply.status == status, "\(request.prefix(120))")
            #expect(reply.headers["content-type"] == "application/json" && reply.headers["connection"] == "close")
            #expect(reply.text == #"{"error":{"code":"bad_request","message":""# + message + #""}}"#)
            #expect(connection.closesUnanswered(within: 5), "closed after the answer, nothing parsed further")
        }
        #expect(server.delegate.next(timeout: 0.2) == nil, "refused heads never reach the delegate")

        // The same on a kept-alive connection's later head.
        let connection = try RawHTTP(port: server.port)
        #expect(try connection.exchange("GET /api/first HTTP/1.1\r\nHost: x\r\n\r\n").text == "ok")
        #expect(try connection.exchange(post + "Content-Length: 1e3\r\n\r\n" + body).status == 400)
        #expect(connection.closesUnanswered(within: 5))
        #expect(server.delegate.next(timeout: 5)?.request.path == "/api/first")
        #expect(server.delegate.next(timeout: 0.2) == nil)
    }

    /// A well-formed Content-Length, with the spaces HTTP allows around it, is read as the screen read it.
    @Test func aContentLengthWithSpacesAroundItIsRead() throws {
        let server = try HTTPTestServer { request in .answer(HTTPResponse(status: 200, body: request.body)) }
        defer { server.stop() }
        let connection = try RawHTTP(port: server.port)
        let reply = try connection.exchange("POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length:  2 \r\n\r\n{}")
        #expect(reply.status == 200 && reply.text == "{}")
        #expect(try connection.exchange("GET /api/x HTTP/1.1\r\nHost: x\r\n\r\n").status == 200, "kept alive")
    }

    @Test func aRequestLineThatIsNotHTTPIsAnswered400() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        for request in ["GARBAGE\r\n\r\n", "GET /api/x\r\n\r\n", "GET /api/x HTTP/1.1 extra\r\n\r\n"] {
            let reply = try RawHTTP.closing(request, port: server.port)
            #expect(reply.statusLine == "HTTP/1.1 400 Bad Request", "\(request)")
            #expect(reply.body == #"{"error":{"code":"bad_request","message":"not an HTTP request line"}}"#)
        }
        #expect(server.delegate.next(timeout: 0.2) == nil)
        #expect(try RawHTTP.get("/api/x", port: server.port).text == "ok")
    }

    /// A method the server implements on no path is answered 501 (RFC 9110, 15.6.2), not with the library's
    /// 403, on a connection's first head and on a later one; a later head that is not HTTP at all, 400. The
    /// connection is closed after the answer: nothing after such a head is read as a request.
    @Test func anUnknownMethodIsAnswered501AndALaterHeadThatIsNotHTTP400() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        let reason = "the request method is not one this server implements"
        let notImplemented = #"{"error":{"code":"bad_request","message":""# + reason + #"","field":"method"}}"#
        let cases: [(request: String, status: Int, body: String)] = [
            ("BREW /api/x HTTP/1.1\r\nHost: x\r\n\r\n", 501, notImplemented),
            ("PROPFIND /api/rooms/x HTTP/1.1\r\nHost: x\r\nDepth: 1\r\n\r\n", 501, notImplemented),
            ("TRACE /api/x HTTP/1.1\r\nHost: x\r\n\r\nGET /api/smuggled HTTP/1.1\r\nHost: x\r\n\r\n", 501, notImplemented),
            ("BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 501, reason + "\n"),
            ("CONNECT /api/x HTTP/1.1\r\nHost: x\r\n\r\n", 501, notImplemented),
            ("GARBAGE\r\n\r\n", 400, #"{"error":{"code":"bad_request","message":"not an HTTP request line"}}"#),
        ]
        for (request, status, body) in cases {
            for later in [false, true] {
                let connection = try RawHTTP(port: server.port)
                if later { #expect(try connection.exchange("GET /api/first HTTP/1.1\r\nHost: x\r\n\r\n").text == "ok") }
                let reply = try connection.exchange(request)
                let what = "\(request.prefix(16)) (\(later ? "later" : "first") head)"
                #expect(reply.status == status, "\(what)")
                #expect(reply.text == body, "\(what)")
                #expect(reply.headers["connection"] == "close", "\(what)")
                #expect(connection.closesUnanswered(within: 5), "\(what)")
            }
        }
        for _ in 0..<cases.count {
            #expect(server.delegate.next(timeout: 5)?.request.path == "/api/first")
        }
        #expect(server.delegate.next(timeout: 0.2) == nil, "nothing after a refused head is read")
        #expect(try RawHTTP.get("/api/x", port: server.port).text == "ok")
    }

    /// A body longer than the server reads is refused on its head, before any of it is read: 413 in the shape of
    /// the path's errors, and the connection closed right after the answer, not held open for the rest.
    @Test func aBodyOverTheLimitIsAnswered413AndTheConnectionClosed() throws {
        let server = try HTTPTestServer { request in .answer(HTTPResponse(status: 200, text: "\(request.body.count)")) }
        defer { server.stop() }
        let limit = HTTPRequest.maxBodyBytes
        let cases = [
            ("POST /api/rooms/x/commands", "application/json",
             #"{"error":{"code":"too_large","message":"a body is limited to \#(limit) bytes"}}"#),
            ("POST /healthz", "text/plain; charset=utf-8", "a body is limited to \(limit) bytes\n"),
            ("GET /api/x", "application/json", #"{"error":{"code":"too_large","message":"a body is limited to \#(limit) bytes"}}"#),
        ]
        for (line, type, body) in cases {
            for later in [false, true] {
                let connection = try RawHTTP(port: server.port)
                if later { #expect(try connection.exchange("GET /api/first HTTP/1.1\r\nHost: x\r\n\r\n").status == 200) }
                // A part of the body only: the answer waits for none of it.
                let reply = try connection.exchange("\(line) HTTP/1.1\r\nHost: x\r\nContent-Length: \(limit + 1)\r\n\r\n"
                                                    + String(repeating: "x", count: 1000))
                #expect(reply.status == 413, "\(line)")
                #expect(reply.headers["content-type"] == type && reply.text == body, "\(line)")
                #expect(reply.headers["connection"] == "close", "\(line)")
                #expect(connection.closesUnanswered(within: 5), "\(line): closed at once")
            }
        }
        for _ in 0..<cases.count {
            #expect(server.delegate.next(timeout: 5)?.request.path == "/api/first")
        }
        #expect(server.delegate.next(timeout: 0.2) == nil, "refused heads never reach the delegate")
        let full = try RawHTTP(port: server.port).exchange("POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: \(limit)\r\n\r\n"
                                                            + String(repeating: "x", count: limit))
        #expect(full.status == 200 && full.text == "\(limit)", "a body of the limit is read")
    }

    /// Every answer the transport writes itself carries the headers the server's other answers carry.
    @Test func theTransportsOwnAnswersCarryTheSecurityHeaders() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        let normal = try RawHTTP.get("/api/x", port: server.port)
        let names = ["content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy", "cache-control"]
        #expect(names.allSatisfy { normal.headers[$0] != nil }, "\(normal.headers)")
        let long = String(repeating: "a", count: 5000)
        let first: [(String, Int)] = [
            ("GARBAGE\r\n\r\n", 400),
            ("GET /api/\(long) HTTP/1.1\r\nHost: x\r\n\r\n", 414),
            ("GET /api/x HTTP/1.1\r\nHost: x\r\nX-Big: \(long)\r\n\r\n", 431),
            ("POST /api/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
            ("POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 99999\r\n\r\n", 413),
            ("BREW /api/x HTTP/1.1\r\nHost: x\r\n\r\n", 501),
        ]
        // On a later head the library reads it first: its cut-short target, its unreadable head, its dropped one.
        let later: [(String, Int)] = [
            ("GET /api/\(long) HTTP/1.1\r\nHost: x\r\n\r\n", 414),
            ("GARBAGE\r\n\r\n", 400),
            ("GET /api/rooms/secret%00/stats HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ]
        for (request, status, isLater) in first.map({ ($0.0, $0.1, false) }) + later.map({ ($0.0, $0.1, true) }) {
            let connection = try RawHTTP(port: server.port)
            if isLater { #expect(try connection.exchange("GET /api/first HTTP/1.1\r\nHost: x\r\n\r\n").status == 200) }
            let reply = try connection.exchange(request)
            #expect(reply.status == status, "\(request.prefix(16))")
            for name in names {
                #expect(reply.headers[name] == normal.headers[name], "\(name) on the \(status)")
            }
        }
    }

    @Test func aGoodHeadOnAKeptAliveConnectionIsNotAnsweredTwice() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "ok")) }
        defer { server.stop() }
        let connection = try RawHTTP(port: server.port)
        #expect(try connection.exchange("GET /api/a HTTP/1.1\r\nHost: x\r\n\r\n").text == "ok")
        connection.send("GET /api/b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let rest = RawHTTP.Closing(connection.readToEnd())
        #expect(rest.statusLine == "HTTP/1.1 200 OK")
        #expect(rest.body == "ok", "nothing follows the answer")
    }
}

/// A known path asked with a method it does not answer: 405 with `Allow`, in the shape of the path's errors.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct WrongMethodTests {
    @Test func knownPathsAnswer405WithAllow() throws {
        let server = try LiveServer()
        defer { server.stop() }
        let cases: [(method: String, path: String, allow: String, body: String)] = [
            ("GET", "/api/rooms", "POST", #"{"error":{"code":"bad_request","message":"only POST is answered here","field":"method"}}"#),
            ("OPTIONS", "/api/rooms/x/commands", "POST",
             #"{"type":"error","code":"bad_request","message":"only POST is answered here","field":"method"}"#),
            ("PUT", "/api/rooms/x", "GET, HEAD",
             #"{"error":{"code":"bad_request","message":"only GET and HEAD are answered here","field":"method"}}"#),
            ("DELETE", "/api/rooms/x/stats", "GET, HEAD",
             #"{"error":{"code":"bad_request","message":"only GET and HEAD are answered here","field":"method"}}"#),
            ("POST", "/api/openapi.json", "GET, HEAD",
             #"{"error":{"code":"bad_request","message":"only GET and HEAD are answered here","field":"method"}}"#),
            ("DELETE", "/healthz", "GET, HEAD", "only GET and HEAD are answered here\n"),
            ("POST", "/readyz", "GET, HEAD", "only GET and HEAD are answered here\n"),
            ("POST", "/metrics", "GET, HEAD", "only GET and HEAD are answered here\n"),
            ("PUT", "/r/team", "GET, HEAD", "only GET and HEAD are answered here\n"),
        ]
        let connection = try RawHTTP(port: server.port)
        for (method, path, allow, body) in cases {
            let reply = try connection.exchange("\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            #expect(reply.status == 405, "\(method) \(path)")
            #expect(reply.headers["allow"] == allow, "\(method) \(path)")
            #expect(reply.text == body, "\(method) \(path)")
        }
        #expect(try connection.exchange("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n", head: true).status == 200)
        #expect(try connection.exchange("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").text == "ok\n")
    }
}

@Suite(.onOwnThreads) struct RequestHeadScreenTests {
    let screen = RequestHeadScreen()

    private func verdict(_ head: String) -> RequestHeadScreen.Verdict { screen.verdict(Array(head.utf8)) }

    @Test func passesOrdinaryHeads() {
        let browser = "GET /api/rooms/team%20a/stats?days=14&tz=Europe%2FBerlin HTTP/1.1\r\nHost: focus.example.com\r\n"
            + "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/120.0\r\nAccept: */*\r\n"
            + "Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\nConnection: keep-alive\r\n\r\n"
        #expect(verdict(browser) == .pass)
        #expect(verdict("GET /a%2500b HTTP/1.1\r\n\r\n") == .pass, "an encoded % followed by 00 is no NUL")
        #expect(verdict("") == .pass)
        #expect(verdict("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n") == .pass, "a head still arriving")
        // What follows the blank line is a body or the next request, not this head.
        #expect(verdict("GET / HTTP/1.1\r\n\r\n" + String(repeating: "x: y\r\n", count: 1000)) == .pass)
    }

    @Test func refusesALongRequestLine() {
        let prefix = "GET /", suffix = " HTTP/1.1"
        let fits = prefix + String(repeating: "a", count: screen.maxRequestLineBytes - prefix.count - suffix.count) + suffix
        #expect(verdict(fits + "\r\n\r\n") == .pass)
        #expect(verdict("GET /a" + fits.dropFirst(5) + "\r\n\r\n") == .refuse(status: 414, reason: "request line too long"))
        #expect(verdict("GET /" + String(repeating: "a", count: 3000)) == .refuse(status: 414, reason: "request line too long"),
                "judged on its part while it arrives")
    }

    @Test func refusesANULInTheTarget() {
        let refused = RequestHeadScreen.Verdict.refuse(status: 400, reason: "NUL in the request target")
        #expect(verdict("GET /api/rooms/secret%00/stats HTTP/1.1\r\n\r\n") == refused)
        #expect(verdict("GET /x?a=%00 HTTP/1.1\r\n\r\n") == refused)
        #expect(verdict("GET /x\u{0}y HTTP/1.1\r\n\r\n") == refused)
    }

    @Test func refusesTooManyQueryPieces() {
        let most = (1...screen.maxQueryPieces).map { "k\($0)=v" }.joined(separator: "&")
        #expect(verdict("GET /x?\(most) HTTP/1.1\r\n\r\n") == .pass)
        #expect(verdict("GET /x?\(most);k=v HTTP/1.1\r\n\r\n") == .refuse(status: 400, reason: "query too large"))
    }

    @Test func refusesARequestLineThatIsNotHTTP() {
        let refused = RequestHeadScreen.Verdict.refuse(status: 400, reason: "not an HTTP request line")
        #expect(verdict("GARBAGE\r\n\r\n") == refused)
        #expect(verdict("GET /\r\n") == refused, "HTTP/0.9 is not served")
        #expect(verdict("GET / HTTP/1.1 x\r\n") == refused)
        #expect(verdict("G(T / HTTP/1.1\r\n") == refused, "a method is a token")
        #expect(verdict("GET / HTTQ/1.1\r\n") == refused)
        #expect(verdict("GARBAGE") == .pass, "judged once the line is whole")
        #expect(verdict("PATCH /x HTTP/1.0\r\n\r\n") == .pass)
    }

    @Test func refusesAMethodTheLibraryDoesNotRead() {
        let refused = RequestHeadScreen.Verdict.refuse(status: 501, reason: "the request method is not one this server implements")
        #expect(verdict("BREW /pot HTTP/1.1\r\n\r\n") == refused)
        #expect(verdict("PROPFIND /x HTTP/1.1\r\n") == refused)
        #expect(verdict("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") == refused, "HTTP/2 without TLS is not served")
        #expect(verdict("BREW /pot HTTP/1.1") == .pass, "judged once the line is whole")
        #expect(verdict("CONNECT example.com:443 HTTP/1.1\r\n\r\n") == refused)
        for method in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "get"] {
            #expect(verdict("\(method) /x HTTP/1.1\r\n\r\n") == .pass, "\(method): the library reads it")
        }
        #expect(screen.unreadable(Array("BREW /pot HTTP/1.1\r\n\r\n".utf8)) == (501, "the request method is not one this server implements"))
        #expect(screen.unreadable(Array("GET".utf8)) == (400, "not an HTTP request line"), "nothing the screen refuses")
    }

    @Test func namesTheRequestPath() {
        #expect(RequestHeadScreen.path(Array("GET /api/x?y=1 HTTP/1.1\r\n".utf8)) == "/api/x")
        #expect(RequestHeadScreen.path(Array("GET /r/team".utf8)) == "/r/team", "from a line still arriving")
        #expect(RequestHeadScreen.path(Array("GARBAGE\r\n".utf8)) == nil)
        #expect(RequestHeadScreen.path(Array("CONNECT example.com:443 HTTP/1.1\r\n".utf8)) == nil)
    }

    @Test func judgesTheBodysFraming() {
        func framing(_ lengths: [String], chunked: Bool = false) -> RequestHeadScreen.Verdict {
            screen.framing(contentLengths: lengths, transferEncoding: chunked)
        }
        let notANumber = RequestHeadScreen.Verdict.refuse(status: 400, reason: "Content-Length must be one decimal number of bytes")
        #expect(framing([]) == .pass)
        #expect(framing(["0"]) == .pass && framing(["16"]) == .pass && framing([" 16\t"]) == .pass)
        #expect(framing(["\(screen.maxBodyBytes)"]) == .pass)
        let tooLong = RequestHeadScreen.Verdict.refuse(status: 413, reason: "a body is limited to \(screen.maxBodyBytes) bytes")
        #expect(framing(["\(screen.maxBodyBytes + 1)"]) == tooLong)
        #expect(framing([String(repeating: "9", count: RequestHeadScreen.maxContentLengthDigits)]) == tooLong)
        for value in ["abc", "1e3", "-1", "+1", "0x10", "1 6", "16,16", "", " ", "١٦"] {
            #expect(framing([value]) == notANumber, "\(value)")
        }
        #expect(framing(["99999999999999999999"]) == .refuse(status: 400, reason: "Content-Length too large"))
        #expect(framing(["16", " 16"]) == .refuse(status: 400, reason: "Content-Length sent more than once"))
        #expect(framing([], chunked: true) == .refuse(
            status: 411, reason: "a request body needs a Content-Length; Transfer-Encoding (chunked) is not read"))
        #expect(framing(["16"], chunked: true) == .refuse(status: 400, reason: "Transfer-Encoding and Content-Length together"))
        #expect(screen.contentLength([" 2 "]) == 2)
        #expect(screen.contentLength([]) == nil && screen.contentLength(["1e3"]) == nil && screen.contentLength(["2", "2"]) == nil)
    }

    @Test func refusesAHeadTooLarge() {
        let refused = RequestHeadScreen.Verdict.refuse(status: 431, reason: "request head too large")
        let lines = (1...screen.maxHeaderLines).map { "h\($0): v\r\n" }.joined()
        #expect(verdict("GET / HTTP/1.1\r\n\(lines)\r\n") == .pass)
        #expect(verdict("GET / HTTP/1.1\r\n\(lines)h: v\r\n\r\n") == refused)
        #expect(verdict("GET / HTTP/1.1\r\nX-Big: \(String(repeating: "b", count: 4096))\r\n\r\n") == refused)
        #expect(verdict("GET / HTTP/1.1\r\nX-Big: \(String(repeating: "b", count: 5000))") == refused, "unfinished")
    }
}

extension RawHTTP {
    /// What came back before the server closed the connection: its status line and body.
    struct Closing {
        var statusLine: String
        var body: String

        init(_ bytes: [UInt8]) {
            let text = String(decoding: bytes, as: UTF8.self)
            let parts = text.components(separatedBy: "\r\n\r\n")
            statusLine = text.components(separatedBy: "\r\n").first ?? ""
            body = parts.dropFirst().joined(separator: "\r\n\r\n")
        }
    }

    /// Sends `request` on a connection of its own and reads until the server closes it.
    static func closing(_ request: String, port: Int) throws -> Closing {
        let connection = try RawHTTP(port: port)
        connection.send(request)
        return Closing(connection.readToEnd())
    }
}
