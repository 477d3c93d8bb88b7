import Dispatch
import Foundation
import Glibc
import PomodoroNet
import PomodoroTestSupport
import Testing

/// The transport's dynamic HTTP on its own: a WebSocketServer with a delegate that answers now, later from
/// another thread, or never, and hand-written requests over loopback sockets.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct HTTPTests {
    @Test func answersLaterFromAnotherThread() throws {
        let server = try HTTPTestServer { _ in .park }
        defer { server.stop() }
        let connection = try RawHTTP(port: server.port)
        connection.send("GET /api/rooms/team-alpha/stats?days=14 HTTP/1.1\r\nHost: x\r\n\r\n")
        let (request, responder) = try #require(server.delegate.next())
        #expect(request.method == .get && request.path == "/api/rooms/team-alpha/stats")
        #expect(connection.staysQuiet(milliseconds: 200), "nothing is written before the answer")

        let answered = DispatchSemaphore(value: 0)
        let counted = Cell<[Bool]>([])
        DispatchQueue.global().async {
            let first = responder.respond(HTTPResponse(status: 200, contentType: "application/json", text: "{\"n\":1}"))
            let second = responder.respond(HTTPResponse(status: 500, text: "second\n"))
            counted.value = [first, second]
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 5) == .success)
        #expect(counted.value == [true, false], "only the first answer counts")
        let reply = try connection.response()
        #expect(reply.status == 200 && reply.text == "{\"n\":1}")
        #expect(reply.headers["content-type"] == "application/json")
        #expect(reply.headers["cache-control"] == "no-store")

        // The second answer went nowhere: the next request on the connection gets its own.
        connection.send("GET /api/again HTTP/1.1\r\nHost: x\r\n\r\n")
        let (again, laterResponder) = try #require(server.delegate.next())
        #expect(again.path == "/api/again")
        laterResponder.respond(HTTPResponse(status: 200, text: "again"))
        #expect(try connection.response().text == "again")
        #expect(server.pendingCount() == 0)
    }

    @Test func parsesTheQuery() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 204, body: [])) }
        defer { server.stop() }
        let query = "days=14&tz=Europe/Berlin&tz2=Europe%2FBerlin&name=Ana+Lu%C3%ADsa&sum=1%2B1&dup=first&dup=second"
            + "&flag&empty=&amp=a%26b&eq=x%3Dy=z&&=nokey&space=%20x%20&semi=1;colon=2&odd%3Dkey=3"
        let reply = try RawHTTP.get("/api/rooms/team%20alpha/stats?\(query)", port: server.port)
        #expect(reply.status == 204)
        let (request, _) = try #require(server.delegate.next())
        #expect(request.path == "/api/rooms/team alpha/stats")
        #expect(request.query == [
            "days": "14", "tz": "Europe/Berlin", "tz2": "Europe/Berlin", "name": "Ana Luísa", "sum": "1+1",
            "dup": "first", "flag": "", "empty": "", "amp": "a&b", "eq": "x=y=z", "space": " x ",
            // The library's own rules: `;` separates too, an encoded `=` in a key turns into `_`.
            "semi": "1", "colon": "2", "odd_key": "3",
        ])

        let bare = try RawHTTP.get("/api/plain", port: server.port)
        #expect(bare.status == 204)
        #expect(try #require(server.delegate.next()).request.query == [:])
    }

    @Test func refusesAnOversizedQuery() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 204, body: [])) }
        defer { server.stop() }
        let many = (0...HTTPRequest.maxQueryParameters).map { "k\($0)=v" }.joined(separator: "&")
        let long = "before=" + String(repeating: "x", count: HTTPRequest.maxQueryValueBytes + 1)
        let longKey = String(repeating: "k", count: HTTPRequest.maxQueryKeyBytes + 1) + "=1"
        for query in [many, long, longKey] {
            let reply = try RawHTTP.get("/api/x?\(query)", port: server.port)
            #expect(reply.status == 400, "\(query.prefix(20))…")
        }
        let most = (1...HTTPRequest.maxQueryParameters).map { "k\($0)=v" }.joined(separator: "&")
        #expect(try RawHTTP.get("/api/x?\(most)", port: server.port).status == 204)
        let (request, _) = try #require(server.delegate.next())
        #expect(request.query.count == HTTPRequest.maxQueryParameters)
        #expect(server.delegate.next(timeout: 0.2) == nil, "refused queries never reached the delegate")
    }

    @Test func passesAuthorizationAndAccept() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 204, body: [])) }
        defer { server.stop() }
        _ = try RawHTTP(port: server.port).exchange(
            "GET /api/rooms/a/history?format=csv HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cr3t.t0ken\r\n"
                + "Accept: text/csv\r\n\r\n")
        let (request, _) = try #require(server.delegate.next())
        #expect(request.authorization == "Bearer s3cr3t.t0ken" && request.accept == "text/csv")
        #expect(request.peer == "127.0.0.1")

        _ = try RawHTTP.get("/api/rooms/a/history", port: server.port)
        let (bare, _) = try #require(server.delegate.next())
        #expect(bare.authorization == nil && bare.accept == nil)
    }

    @Test func headGetsTheHeadersOnly() throws {
        let body = "id,minutes\n1,25\n"
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, contentType: "text/csv", text: body)) }
        defer { server.stop() }
        // On one keep-alive connection: were any body bytes sent after HEAD, the GET's answer would not parse.
        let connection = try RawHTTP(port: server.port)
        connection.send("HEAD /api/rooms/a/history?format=csv HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try connection.response(head: true)
        #expect(head.status == 200 && head.headers["content-length"] == "\(body.utf8.count)")
        #expect(head.headers["content-type"] == "text/csv" && head.headers["cache-control"] == "no-store")
        connection.send("GET /api/rooms/a/history?format=csv HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try connection.response().text == body)
        #expect(try #require(server.delegate.next()).request.method == .head)
        #expect(try #require(server.delegate.next()).request.method == .get)
    }

    @Test func headOnTheRealServersDynamicPaths() throws {
        let server = try LiveServer()
        defer { server.stop() }
        let connection = try RawHTTP(port: server.port)
        connection.send("HEAD /r/team-alpha HTTP/1.1\r\nHost: x\r\n\r\n")
        let invite = try connection.response(head: true)
        #expect(invite.status == 200 && invite.headers["content-type"] == "text/html; charset=utf-8")
        connection.send("HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let health = try connection.response(head: true)
        #expect(health.status == 200 && health.headers["content-length"] == "3")
        #expect(connection.closesUnanswered(within: 5), "nothing follows the headers")
    }

    /// Files, dynamic paths and errors alike carry the security headers; the page may open WebSockets to its
    /// own origin only, not to any host.
    @Test func everyResponseCarriesTheSecurityHeaders() throws {
        let server = try LiveServer()
        defer { server.stop() }
        for path in ["/", "/app.js", "/healthz", "/r/team-alpha", "/no-such-file"] {
            let connection = try RawHTTP(port: server.port)
            connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let reply = try connection.response()
            let policy = reply.headers["content-security-policy"] ?? ""
            #expect(policy.contains("connect-src 'self';") && policy.contains("script-src 'self';"), "\(path): \(policy)")
            #expect(!policy.contains("ws:") && !policy.contains("wss:"), "\(path): \(policy)")
            #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"), "\(path): \(policy)")
            #expect(reply.headers["x-content-type-options"] == "nosniff", "\(path)")
            #expect(reply.headers["x-frame-options"] == "deny", "\(path)")
            #expect(reply.headers["referrer-policy"] == "no-referrer", "\(path)")
        }
    }

    @Test func sendsExtraHeaders() throws {
        let server = try HTTPTestServer { request in
            switch request.path {
            case "/api/private":
                .answer(HTTPResponse(status: 401, headers: [("WWW-Authenticate", "Bearer realm=\"pomodoro\"")],
                                     text: "sign in\n"))
            case "/api/export":
                .answer(HTTPResponse(status: 200, contentType: "text/csv",
                                     headers: [("Content-Disposition", "attachment; filename=\"history.csv\""),
                                               ("X-Evil", "a\r\nSet-Cookie: stolen=1"), ("Bad Name", "x"),
                                               ("Content-Length", "999")],
                                     text: "a,b\n"))
            default:
                .answer(HTTPResponse(status: 200, headers: [("Cache-Control", "max-age=60")], text: "cached\n"))
            }
        }
        defer { server.stop() }
        let denied = try RawHTTP.get("/api/private", port: server.port)
        #expect(denied.status == 401 && denied.headers["www-authenticate"] == "Bearer realm=\"pomodoro\"")
        #expect(denied.headers["cache-control"] == "no-store" && denied.text == "sign in\n")

        let export = try RawHTTP.get("/api/export", port: server.port)
        #expect(export.headers["content-disposition"] == "attachment; filename=\"history.csv\"")
        #expect(export.headers["content-length"] == "4" && export.text == "a,b\n")
        #expect(export.headers["set-cookie"] == nil && export.headers["x-evil"] == nil)
        #expect(export.headers["bad name"] == nil)

        let cached = try RawHTTP.get("/api/cached", port: server.port)
        #expect(cached.headers["cache-control"] == "max-age=60")
    }

    @Test func aLargeBodyArrivesIntact() throws {
        let size = 2 * 1024 * 1024 + 123
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let server = try HTTPTestServer { _ in .park }
        defer { server.stop() }
        let connection = try RawHTTP(port: server.port)
        connection.send("GET /api/rooms/a/history?format=csv&limit=100000 HTTP/1.1\r\nHost: x\r\n\r\n")
        let (_, responder) = try #require(server.delegate.next())
        DispatchQueue.global().async {
            responder.respond(HTTPResponse(status: 200, contentType: "text/csv", body: body))
        }
        let reply = try connection.response()
        #expect(reply.status == 200 && reply.headers["content-length"] == "\(size)")
        #expect(reply.body.count == size && reply.body == body)
        // The connection is ready for its next request.
        connection.send("GET /api/next HTTP/1.1\r\nHost: x\r\n\r\n")
        try #require(server.delegate.next()).responder.respond(HTTPResponse(status: 200, text: "next"))
        #expect(try connection.response().text == "next")
    }

    /// A reader that takes a few bytes every 100 ms restarts the response timeout with every piece it
    /// takes; the deadline from the answer's first byte closes it all the same.
    @Test func aSlowReaderIsClosedAtTheResponsesDeadline() throws {
        // More than the loopback socket buffers on both sides hold, so the server cannot hand it all off.
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 16 * 1024 * 1024)
        let server = try HTTPTestServer(responseTimeoutSeconds: 30, responseDeadlineSeconds: 2) { _ in
            .answer(HTTPResponse(status: 200, contentType: "text/csv", body: body))
        }
        defer { server.stop() }
        let connection = try RawHTTP(port: server.port, receiveBuffer: 4096)
        connection.send("GET /api/rooms/a/history?format=csv HTTP/1.1\r\nHost: x\r\n\r\n")
        // The server closes its end, and drops the answer, at the deadline; what the kernel already holds
        // still trickles out to the client after that, so the server's side is what is checked.
        let (received, firstByte, closed) = connection.trickle(bytes: 64, everyMilliseconds: 100, forAtMost: 10) {
            server.pendingCount() == 0
        }
        let open = try #require(closed).timeIntervalSince(try #require(firstByte))
        #expect(received > 0 && received < body.count)
        #expect(open > 1.5 && open < 4, "closed \(open) s after the first byte")
    }

    /// Requests in progress from one address are bounded; the next one is refused at once, and the address
    /// may ask again once one has been answered.
    @Test func oneAddressHasABoundedNumberOfRequestsInProgress() throws {
        let server = try HTTPTestServer(maxRequestsPerAddress: 2) { request in
            request.path == "/api/quick" ? .answer(HTTPResponse(status: 200, text: "quick")) : .park
        }
        defer { server.stop() }
        let first = try RawHTTP(port: server.port)
        let second = try RawHTTP(port: server.port)
        first.send("GET /api/wait HTTP/1.1\r\nHost: x\r\n\r\n")
        second.send("GET /api/wait HTTP/1.1\r\nHost: x\r\n\r\n")
        let (_, responder) = try #require(server.delegate.next())
        let (_, other) = try #require(server.delegate.next())
        let refused = try RawHTTP.get("/api/quick", port: server.port)
        #expect(refused.status == 429 && refused.headers["retry-after"] == "1")
        responder.respond(HTTPResponse(status: 200, text: "done"))
        #expect(try first.response().text == "done")
        #expect(server.eventually { $0.pendingCount() == 1 })
        #expect(try RawHTTP.get("/api/quick", port: server.port).text == "quick")
        withExtendedLifetime(other) {}
    }

    @Test func anAnswerAfterTheClientLeftIsHarmless() throws {
        let server = try HTTPTestServer { request in
            request.path == "/api/quick" ? .answer(HTTPResponse(status: 200, text: "quick")) : .park
        }
        defer { server.stop() }
        var connection: RawHTTP? = try RawHTTP(port: server.port)
        connection?.send("GET /api/slow HTTP/1.1\r\nHost: x\r\n\r\n")
        let (_, responder) = try #require(server.delegate.next())
        #expect(server.pendingCount() == 1)
        connection = nil

        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            responder.respond(HTTPResponse(status: 200, body: Array(repeating: 1, count: 300_000)))
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(server.eventually { $0.pendingCount() == 0 }, "the request is over, written or not")
        #expect(try RawHTTP.get("/api/quick", port: server.port).text == "quick")
        #expect(server.pendingCount() == 0)
    }

    @Test func anUnansweredRequestIsAnswered503AtTheTimeout() throws {
        let server = try HTTPTestServer(responseTimeoutSeconds: 1) { request in
            request.path == "/api/quick" ? .answer(HTTPResponse(status: 200, text: "quick")) : .park
        }
        defer { server.stop() }
        let waiting = try RawHTTP(port: server.port)
        // A client that has sent all it will (its socket half-closed, so readable at the server's end) must
        // not keep the service thread busy while its request waits.
        let gone = try RawHTTP(port: server.port)
        let sent = Date()
        waiting.send("GET /api/never HTTP/1.1\r\nHost: x\r\n\r\n")
        gone.send("GET /api/never-either HTTP/1.1\r\nHost: x\r\n\r\n")
        gone.finishSending()
        // Both responders are kept: one released unanswered would answer 500.
        let (_, responder) = try #require(server.delegate.next())
        let (_, other) = try #require(server.delegate.next())
        let cpuBefore = try #require(server.serviceThreadCPUSeconds())
        // Each is told, not hung up on: 503 and when to try again.
        for connection in [waiting, gone] {
            let reply = try connection.response()
            #expect(reply.status == 503 && reply.headers["retry-after"] == "5", "\(reply.status) \(reply.text)")
            #expect(reply.text.contains("could not answer in time"))
        }
        let cpu = try #require(server.serviceThreadCPUSeconds()) - cpuBefore
        #expect(Date().timeIntervalSince(sent) > 0.9, "not before the timeout")
        #expect(cpu < 0.3, "the service thread spent \(cpu) s of CPU waiting")
        #expect(server.pendingCount() == 0)
        // The application's answer after that goes nowhere; the connection serves its next request.
        #expect(responder.respond(HTTPResponse(status: 200, text: "too late")))
        waiting.send("GET /api/quick HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try waiting.response().text == "quick")
        withExtendedLifetime(other) {}
        #expect(try RawHTTP.get("/api/quick", port: server.port).text == "quick")
    }

    @Test func aForgottenResponderAnswers500() throws {
        let server = try HTTPTestServer { _ in .forget }
        defer { server.stop() }
        let reply = try RawHTTP.get("/api/oops", port: server.port)
        #expect(reply.status == 500)
    }

    @Test func aPostBodyIsSkippedAndTheAnswerStillComes() throws {
        let server = try HTTPTestServer { _ in .park }
        defer { server.stop() }
        let connection = try RawHTTP(port: server.port)
        connection.send("POST /api/rooms/a/notes HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello=world")
        let (request, responder) = try #require(server.delegate.next())
        #expect(request.method == .post && request.path == "/api/rooms/a/notes")
        DispatchQueue.global().async { responder.respond(HTTPResponse(status: 202, text: "queued\n")) }
        let reply = try connection.response()
        #expect(reply.status == 202 && reply.text == "queued\n")
    }

    /// HTTP/2 (over TLS, where browsers speak it) frames answers differently: the last piece, or the headers when
    /// nothing follows, must end the stream. Checked with curl, whose HTTP/2 is independent of ours.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func answersOverHTTP2() throws {
        let (certificate, key) = try TLSTests.makeCertificate()
        let server = try HTTPTestServer(tls: (certificate, key)) { request in
            switch request.path {
            case "/api/big": .park
            case "/api/empty": .answer(HTTPResponse(status: 204, body: []))
            default: .answer(HTTPResponse(status: 200, text: "small\n"))
            }
        }
        defer { server.stop() }
        let base = "https://127.0.0.1:\(server.port)/api"
        let size = 300_000
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        let saved = FileManager.default.temporaryDirectory.appendingPathComponent("pomodoro-h2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: saved) }

        let big = try Curl(["-o", saved.path, "\(base)/big"])
        let (_, responder) = try #require(server.delegate.next())
        DispatchQueue.global().async { responder.respond(HTTPResponse(status: 200, body: body)) }
        #expect(try big.finish() == "0 2 200 \(size)")
        #expect(try Data(contentsOf: saved) == Data(body))

        #expect(try Curl(["-o", "/dev/null", "\(base)/empty"]).finish() == "0 2 204 0")
        #expect(try Curl(["-o", "/dev/null", "-I", "\(base)/small"]).finish() == "0 2 200 0")
        #expect(try Curl(["-o", "/dev/null", "\(base)/small"]).finish() == "0 2 200 6")
    }

    @Test func onlyTheDynamicPathsReachTheDelegate() throws {
        let server = try HTTPTestServer { _ in .answer(HTTPResponse(status: 200, text: "mine")) }
        defer { server.stop() }
        for path in ["/api", "/api/", "/api/rooms/x", "/healthz"] {
            #expect(try RawHTTP.get(path, port: server.port).text == "mine", "\(path)")
        }
        for path in ["/apix", "/", "/other", "/healthzz"] {
            #expect(try RawHTTP.get(path, port: server.port).status == 404, "\(path)")
        }
    }
}

// MARK: - A transport with a scripted delegate

/// What the test delegate does with a request.
enum HTTPTestAction: Sendable {
    /// Answer at once, on the service thread.
    case answer(HTTPResponse)
    /// Keep the responder for the test to answer (or not).
    case park
    /// Drop the responder without answering.
    case forget
}

/// Records every dynamic request with its responder; the test takes them in order.
final class HTTPTestDelegate: WebSocketServerDelegate, @unchecked Sendable {
    private let route: @Sendable (HTTPRequest) -> HTTPTestAction
    private let condition = NSCondition()
    private var received: [(request: HTTPRequest, responder: HTTPResponder)] = []

    init(route: @escaping @Sendable (HTTPRequest) -> HTTPTestAction) { self.route = route }

    func server(_ server: WebSocketServer, didReceiveHTTP request: HTTPRequest, responder: HTTPResponder) {
        switch route(request) {
        case .answer(let response):
            responder.respond(response)
            record(request, responder)
        case .park:
            record(request, responder)
        case .forget:
            break
        }
    }

    private func record(_ request: HTTPRequest, _ responder: HTTPResponder) {
        condition.lock()
        received.append((request, responder))
        condition.broadcast()
        condition.unlock()
    }

    /// The oldest request not yet taken, waiting up to `timeout` seconds for one.
    func next(timeout: Double = 5) -> (request: HTTPRequest, responder: HTTPResponder)? {
        let deadline = TestTime.deadline(timeout)
        condition.lock()
        defer { condition.unlock() }
        while received.isEmpty {
            if !condition.wait(until: deadline) { return nil }
        }
        return received.removeFirst()
    }

    func server(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String) {}
    func server(_ server: WebSocketServer, didReceive text: [UInt8], from connection: ConnectionID) {}
    func server(_ server: WebSocketServer, didReject problem: ReceiveProblem, from connection: ConnectionID) {}
    func server(_ server: WebSocketServer, didClose connection: ConnectionID, peerCloseCode: UInt16?) {}
}

/// A WebSocketServer on a loopback port with dynamic paths /api and /healthz and no web root.
final class HTTPTestServer: Sendable {
    let server: WebSocketServer
    let delegate: HTTPTestDelegate
    var port: Int { server.port }

    init(responseTimeoutSeconds: Int = 30, responseDeadlineSeconds: Int = 30, maxRequestsPerAddress: Int = 8,
         tls: (certificate: String, key: String)? = nil, trustedProxies: TrustedProxies = .none,
         route: @escaping @Sendable (HTTPRequest) -> HTTPTestAction) throws {
        var options = WebSocketServerOptions(host: "127.0.0.1", port: 0)
        options.trustedProxies = trustedProxies
        options.tlsCertificatePath = tls?.certificate
        options.tlsPrivateKeyPath = tls?.key
        options.dynamicPaths = ["/api", "/healthz"]
        options.httpResponseTimeoutSeconds = responseTimeoutSeconds
        options.httpResponseDeadlineSeconds = responseDeadlineSeconds
        options.maxHTTPRequestsPerAddress = maxRequestsPerAddress
        // Far from the response timeout, so that a test sees which of the two closed a connection.
        options.handshakeTimeoutSeconds = 10
        server = try WebSocketServer(options: options)
        delegate = HTTPTestDelegate(route: route)
        server.delegate = delegate
        server.start()
    }

    func stop() {
        server.post { [server] in server.shutdown() }
        server.waitUntilFinished()
    }

    /// Requests the transport still holds, read on the service thread; -1 if the thread did not answer.
    func pendingCount() -> Int {
        let cell = Cell(-1)
        let read = DispatchSemaphore(value: 0)
        server.post { [server] in
            cell.value = server.pendingHTTPCount
            read.signal()
        }
        return read.wait(timeout: .now() + 5) == .success ? cell.value : -1
    }

    /// CPU time the service thread has used so far; nil if it did not answer.
    func serviceThreadCPUSeconds() -> Double? {
        let cell = Cell<Double?>(nil)
        let read = DispatchSemaphore(value: 0)
        server.post {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            cell.value = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
            read.signal()
        }
        return read.wait(timeout: .now() + 5) == .success ? cell.value : nil
    }

    /// Checks `condition` again and again (each check a round trip to the service thread) until it holds.
    func eventually(within seconds: Double = 5, _ condition: (HTTPTestServer) -> Bool) -> Bool {
        let deadline = TestTime.deadline(seconds)
        while Date() < deadline {
            if condition(self) { return true }
        }
        return false
    }
}

/// Carries a value from another thread to the test, ordered by a semaphore.
private final class Cell<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

// MARK: - Requests by hand

/// One curl transfer over HTTP/2, trusting any certificate, given at most 10 seconds.
final class Curl {
    private let process: LaunchedProcess

    init(_ arguments: [String]) throws {
        process = try ProcessLauncher.start("/usr/bin/curl",
                                            ["--silent", "--insecure", "--http2", "--max-time", "10",
                                             "--write-out", "%{http_version} %{http_code} %{size_download}"] + arguments)
    }

    /// "exit-status http-version status bytes-received" once curl is done.
    func finish() throws -> String {
        let result = try process.wait(timeout: 20)
        return "\(result.status) " + result.output
    }
}

/// One HTTP response as read off the socket.
struct RawHTTPReply {
    var status: Int
    /// Names in lower case.
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// One HTTP/1.1 connection over a loopback socket: requests written by hand, responses read by Content-Length.
/// Every read gives up after `readTimeout` seconds (5 unless told).
final class RawHTTP {
    private let fd: Int32
    private var unread = [UInt8]()

    /// - Parameter receiveBuffer: a small socket receive buffer (bytes, set before connecting) for a slow reader.
    /// - Parameter readTimeout: how long a read may stay quiet before the test gives up (a bound, not a timing).
    init(port: Int, receiveBuffer: Int32? = nil, readTimeout: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LiveTestFailure(description: "socket failed") }
        var timeout = timeval(tv_sec: TestTime.seconds(readTimeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw LiveTestFailure(description: "connect failed")
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Half-closes the connection: the server reads end-of-file, the answer can still come back.
    func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    /// A GET on a connection of its own.
    static func get(_ target: String, port: Int) throws -> RawHTTPReply {
        try RawHTTP(port: port).exchange("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
    }

    /// Sends one request and reads its response.
    func exchange(_ request: String, head: Bool = false) throws -> RawHTTPReply {
        send(request)
        return try response(head: head)
    }

    /// Reads one response; after HEAD there is no body, whatever Content-Length says.
    func response(head: Bool = false) throws -> RawHTTPReply {
        let separator = Array("\r\n\r\n".utf8)
        var end: Int?
        while true {
            if unread.count >= 4 {
                end = (0...(unread.count - 4)).first { unread[$0..<($0 + 4)].elementsEqual(separator) }
            }
            if end != nil { break }
            guard fill() else { throw LiveTestFailure(description: "no response head") }
        }
        let headEnd = end!
        let lines = String(decoding: unread[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        unread.removeFirst(headEnd + 4)
        // Strict on purpose: stray bytes before a response (a body after HEAD, say) must not go unnoticed.
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 "),
              let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { throw LiveTestFailure(description: "bad status line: \(lines.first ?? "")") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[line[..<colon].lowercased()] = value
        }
        let length = head ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        while unread.count < length {
            guard fill() else { throw LiveTestFailure(description: "body cut short at \(unread.count) of \(length)") }
        }
        let body = Array(unread.prefix(length))
        unread.removeFirst(length)
        return RawHTTPReply(status: status, headers: headers, body: body)
    }

    /// Everything the server sends until it closes the connection (or 5 seconds pass), after what was read so far.
    func readToEnd() -> [UInt8] {
        while fill() {}
        defer { unread.removeAll() }
        return unread
    }

    /// Reads at most `bytes` every `everyMilliseconds` (waiting with poll, not sleeping) until `done`
    /// holds, the server closes the connection, or `forAtMost` seconds pass: how much arrived, when the
    /// first byte did, and when it ended (nil if it did not).
    func trickle(bytes: Int, everyMilliseconds: Int32, forAtMost seconds: Double, until done: () -> Bool)
        -> (received: Int, firstByte: Date?, ended: Date?) {
        let end = TestTime.deadline(seconds)
        var received = 0
        var firstByte: Date?
        var buffer = [UInt8](repeating: 0, count: bytes)
        var idle = Glibc.pollfd(fd: -1, events: 0, revents: 0)
        while Date() < end {
            let count = read(fd, &buffer, bytes)
            if count <= 0 || done() { return (received, firstByte, Date()) }
            if firstByte == nil { firstByte = Date() }
            received += count
            _ = poll(&idle, 1, everyMilliseconds)    // a wait on nothing: the reader's pace, not a sync
        }
        return (received, firstByte, nil)
    }

    /// True if nothing arrives for `milliseconds`.
    func staysQuiet(milliseconds: Int32) -> Bool {
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pollfd, 1, milliseconds) == 0
    }

    /// True if the server closes the connection within `seconds` without sending anything (more).
    func closesUnanswered(within seconds: Int32) -> Bool {
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollfd, 1, seconds * 1000) == 1 else { return false }
        var byte: UInt8 = 0
        return read(fd, &byte, 1) <= 0 && unread.isEmpty
    }

    private func fill() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return false }
        unread.append(contentsOf: buffer[0..<count])
        return true
    }
}
