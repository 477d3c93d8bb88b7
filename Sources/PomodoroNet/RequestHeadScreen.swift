/// A first look at the bytes of a request head, before the library parses them: the heads it would drop
/// without an answer get a status instead (see WebSocketServer+BadRequests.swift).
///
/// The library keeps a head in one table of `tableBytes`, spends a fragment of at most `fragments` on the path,
/// each query parameter and each known header, and stops at a NUL in the target; past any of these it closes
/// the connection without a word. The screen is stricter than those bounds, so that a head it passes never
/// reaches them, and it sees only what has arrived: a head still incomplete is judged on its part.
public struct RequestHeadScreen: Sendable, Equatable {
    /// The longest request line ("GET /path?query HTTP/1.1") taken; longer ones are answered 414.
    public var maxRequestLineBytes = 2048
    /// The library's table for one head; a head whose estimate is larger is answered 431.
    public var tableBytes = 4096
    /// Header lines taken at most; more are answered 431.
    public var maxHeaderLines = 48
    /// Query parameters (pieces between `&` or `;`) taken at most; more are answered 400.
    public var maxQueryPieces = HTTPRequest.maxQueryParameters
    /// The longest request body read; a head that announces a longer one is answered 413.
    public var maxBodyBytes = HTTPRequest.maxBodyBytes

    public init() {}

    /// What becomes of a head that starts with `bytes`.
    public enum Verdict: Equatable, Sendable {
        case pass
        case refuse(status: Int, reason: String)
    }

    public func verdict(_ bytes: [UInt8]) -> Verdict {
        let lines = Self.lines(bytes)
        guard let requestLine = lines.first else { return .pass }
        if requestLine.count > maxRequestLineBytes {
            return .refuse(status: 414, reason: "request line too long")
        }
        // A finished request line that is not "METHOD target HTTP/x.y" is no HTTP request (the library would
        // answer it 403, as if it were forbidden).
        if bytes.contains(UInt8(ascii: "\n")), !requestLine.isEmpty {
            guard Self.isRequestLine(requestLine) else { return .refuse(status: 400, reason: "not an HTTP request line") }
            // A method no path here answers (the library would answer 403 to most): 501, as RFC 9110 (15.6.2)
            // has it for a method the server does not recognise.
            let method = requestLine.prefix { $0 != UInt8(ascii: " ") }
            guard Self.implementedMethods.contains(String(decoding: method, as: UTF8.self).uppercased()) else {
                return .refuse(status: 501, reason: Self.methodNotImplemented)
            }
        }
        let target = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true).dropFirst().first ?? []
        if target.contains(0) || Self.containsEncodedNUL(target) {
            return .refuse(status: 400, reason: "NUL in the request target")
        }
        if let question = target.firstIndex(of: UInt8(ascii: "?")) {
            let separators = target[question...].count { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: ";") }
            if separators + 1 > maxQueryPieces { return .refuse(status: 400, reason: "query too large") }
        }
        // Each header line as sent, plus what the library keeps beside an unknown header's name and value.
        var estimate = requestLine.count
        var headerLines = 0
        for line in lines.dropFirst() {
            if line.isEmpty { break }
            headerLines += 1
            estimate += line.count + 8
        }
        if headerLines > maxHeaderLines || estimate > tableBytes {
            return .refuse(status: 431, reason: "request head too large")
        }
        return .pass
    }

    /// What a head says of its body, as the library read its header lines (every head of a connection, over TLS
    /// and HTTP/2 too): `contentLengths` holds each `Content-Length` line's value as sent, `transferEncoding`
    /// whether a `Transfer-Encoding` line came. The library takes a Content-Length with `atoll` ("1e3" as 1,
    /// "abc" as 0, an overflow as the largest number) and reads a chunked body as if it were plain bytes, so a
    /// body it would misread is refused here, before anything of it is read, and the connection closed after
    /// the answer: whatever follows the head is never taken for the next request.
    ///
    /// - a `Content-Length` that is not one decimal number, comes on more than one line, or is too large to be
    ///   a length: 400;
    /// - a `Content-Length` past `maxBodyBytes`: 413, the body is never read;
    /// - `Transfer-Encoding` (chunked or any other) without a `Content-Length`: 411, the length is required;
    ///   with one: 400, the two disagree on where the body ends.
    public func framing(contentLengths: [String], transferEncoding: Bool) -> Verdict {
        if transferEncoding {
            return contentLengths.isEmpty
                ? .refuse(status: 411, reason: "a request body needs a Content-Length; Transfer-Encoding (chunked) is not read")
                : .refuse(status: 400, reason: "Transfer-Encoding and Content-Length together")
        }
        guard !contentLengths.isEmpty else { return .pass }
        guard contentLengths.count == 1 else { return .refuse(status: 400, reason: "Content-Length sent more than once") }
        let value = contentLengths[0].trimmingOptionalWhitespace
        guard !value.isEmpty, value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return .refuse(status: 400, reason: "Content-Length must be one decimal number of bytes")
        }
        guard value.utf8.count <= Self.maxContentLengthDigits else {
            return .refuse(status: 400, reason: "Content-Length too large")
        }
        guard let length = Int(value), length <= maxBodyBytes else {
            return .refuse(status: 413, reason: bodyTooLong)
        }
        return .pass
    }

    /// Why a body past `maxBodyBytes` is answered 413.
    public var bodyTooLong: String { "a body is limited to \(maxBodyBytes) bytes" }

    /// What a head the library gave up on as not HTTP is answered (it read no method it knows at its start):
    /// the screen's verdict on its bytes, or 400 when the screen would have passed them.
    public func unreadable(_ bytes: [UInt8]) -> (status: Int, reason: String) {
        if case .refuse(let status, let reason) = verdict(bytes) { return (status, reason) }
        return (400, "not an HTTP request line")
    }

    /// The path a head's request line names (its target up to any query), as sent; nil when the line has no
    /// target that starts with `/`.
    public static func path(_ bytes: [UInt8]) -> String? {
        guard let requestLine = lines(bytes).first else { return nil }
        let target = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true).dropFirst().first ?? []
        guard target.first == UInt8(ascii: "/") else { return nil }
        return String(decoding: target.prefix { $0 != UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// The methods a path here answers, or answers 405: those the library reads a request line of (it compares
    /// them without regard to case; any other makes it give up on the head) but CONNECT, which it reads too.
    static let implementedMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// Why a method the server implements on no path is answered 501.
    public static let methodNotImplemented = "the request method is not one this server implements"

    /// The length a head's `Content-Length` lines give its body, read as `framing` judges them: nil without one,
    /// or with one it refuses.
    public func contentLength(_ contentLengths: [String]) -> Int? {
        guard contentLengths.count == 1, framing(contentLengths: contentLengths, transferEncoding: false) == .pass
        else { return nil }
        return Int(contentLengths[0].trimmingOptionalWhitespace)
    }

    /// The most digits a Content-Length may have: anything longer is far past every body the server reads, and
    /// past what the library's 64-bit count of a body can hold.
    public static let maxContentLengthDigits = 15

    /// Whether `line` is "METHOD SP target SP HTTP/d.d": a token, a target without spaces, a version.
    static func isRequestLine(_ line: ArraySlice<UInt8>) -> Bool {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, let method = parts.first, !method.isEmpty, !parts[1].isEmpty,
              method.allSatisfy(HTTPResponse.isTokenByte) else { return false }
        let version = Array(parts[2])
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        return version.count == 8 && version.prefix(5).elementsEqual("HTTP/".utf8)
            && digit.contains(version[5]) && version[6] == UInt8(ascii: ".") && digit.contains(version[7])
    }

    /// The lines of `bytes` without their CR LF; the last one may be unfinished.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            var line = bytes[start..<index]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            lines.append(line)
            start = index + 1
            // A blank line ends the head: what follows is a body or the next request.
            if line.isEmpty && lines.count > 1 { return lines }
        }
        if start < bytes.endIndex { lines.append(bytes[start...]) }
        return lines
    }

    private static func containsEncodedNUL(_ target: ArraySlice<UInt8>) -> Bool {
        var index = target.startIndex
        while index + 2 < target.endIndex {
            if target[index] == UInt8(ascii: "%") && target[index + 1] == UInt8(ascii: "0")
                && target[index + 2] == UInt8(ascii: "0") { return true }
            index += 1
        }
        return false
    }
}

private extension String {
    /// Without the spaces and tabs HTTP allows around a header's value.
    var trimmingOptionalWhitespace: String {
        let bytes = Array(utf8)
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
