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
