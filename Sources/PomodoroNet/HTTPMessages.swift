import Synchronization

/// An HTTP request method, spelled as on the request line ("GET", "HEAD", ...).
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let get = HTTPMethod(rawValue: "GET")
    /// Answered like GET, but the transport sends the headers only (Content-Length still names the body's size).
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let patch = HTTPMethod(rawValue: "PATCH")
    public static let delete = HTTPMethod(rawValue: "DELETE")
    public static let options = HTTPMethod(rawValue: "OPTIONS")
}

/// A request to one of the dynamic paths, copied out of the library's header table before the delegate sees it.
///
/// A body (POST, PUT, PATCH with a Content-Length) is read whole before the delegate sees the request, up to
/// `maxBodyBytes`; a longer one is answered 413 by the transport.
public struct HTTPRequest: Sendable, Equatable {
    public var method: HTTPMethod
    /// The path without the query, percent-decoded and normalised by the library (`//`, `/./` and `/../`
    /// collapsed), so `/api/rooms/team%20a/stats` arrives as `/api/rooms/team a/stats`.
    public var path: String
    /// The query's parameters, percent-decoded, `+` read as a space. A key given twice keeps its first value;
    /// a key without `=` has the value "". The library also splits at `;`, and turns an encoded `=` in a key
    /// into `_`.
    public var query: [String: String]
    /// The `Authorization` header, as sent.
    public var authorization: String?
    /// The `Accept` header, as sent.
    public var accept: String?
    /// The peer's address.
    public var peer: String
    /// The request's body, read whole (empty for GET and HEAD).
    public var body: [UInt8] = []

    /// The largest body read: the control API's commands and room settings are a few hundred bytes.
    public static let maxBodyBytes = 16 * 1024

    /// Bounds on the query. A request past any of them is answered 400 by the transport and never reaches
    /// the delegate (the library already caps the whole request head at 4 KiB).
    public static let maxQueryParameters = 32
    public static let maxQueryKeyBytes = 64
    public static let maxQueryValueBytes = 1024

    public init(method: HTTPMethod, path: String, query: [String: String] = [:], authorization: String? = nil,
                accept: String? = nil, peer: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.authorization = authorization
        self.accept = accept
        self.peer = peer
    }

    /// The query from the library's already-decoded `name=value` pieces, or nil when it is past the bounds.
    static func query(fromPieces pieces: [[UInt8]]) -> [String: String]? {
        var query: [String: String] = [:]
        var count = 0
        for piece in pieces where !piece.isEmpty {
            count += 1
            guard count <= maxQueryParameters else { return nil }
            let equals = piece.firstIndex(of: UInt8(ascii: "=")) ?? piece.endIndex
            let key = piece[..<equals]
            let value = equals < piece.endIndex ? piece[(equals + 1)...] : []
            guard key.count <= maxQueryKeyBytes, value.count <= maxQueryValueBytes else { return nil }
            guard !key.isEmpty else { continue }
            let name = String(decoding: key, as: UTF8.self)
            if query[name] == nil { query[name] = String(decoding: value, as: UTF8.self) }
        }
        return query
    }
}

/// An HTTP answer for a dynamic path.
///
/// The transport writes the status, `Content-Type`, `Content-Length`, `Cache-Control: no-store` (unless
/// `headers` names a Cache-Control of its own) and the library's security headers, then `headers`, then the body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    /// Further headers such as `WWW-Authenticate` or `Content-Disposition`. Names are sent in lower case.
    /// A header whose name is not an HTTP token or whose value holds a CR, LF or NUL is left out, and so are
    /// the ones the transport writes itself (Content-Type, Content-Length, Transfer-Encoding, Connection).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, contentType: String = "text/plain; charset=utf-8",
                headers: [(name: String, value: String)] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public init(status: Int, contentType: String = "text/plain; charset=utf-8",
                headers: [(name: String, value: String)] = [], text: String) {
        self.init(status: status, contentType: contentType, headers: headers, body: Array(text.utf8))
    }

    /// `headers` as they will be sent: lower-case names, invalid and reserved ones left out.
    var sendableHeaders: [(name: String, value: String)] {
        headers.compactMap { header in
            let name = header.name.lowercased()
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte), !Self.reserved.contains(name),
                  !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { return nil }
            return (name, header.value)
        }
    }

    private static let reserved: Set<String> = ["content-type", "content-length", "transfer-encoding", "connection"]

    /// A byte of an HTTP token (RFC 9110 §5.6.2): what a header's name and a request's method are made of.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}

/// Answers one HTTP request, once, from any thread.
///
/// The answer is handed to the service thread, which writes it as the connection becomes writable. If the
/// connection has closed meanwhile (the client went away, or the request timed out after
/// `WebSocketServerOptions.httpResponseTimeoutSeconds`) the answer is dropped. Only the first call counts:
/// later ones are ignored and return false, so racing paths ("the result, or 503 after a deadline") need no
/// coordination. A responder released without answering answers 500, so a forgotten code path does not
/// leave the client waiting for the timeout.
public final class HTTPResponder: Sendable {
    let server: WebSocketServer
    let exchange: UInt64
    private let answered = Atomic<Bool>(false)

    init(server: WebSocketServer, exchange: UInt64) {
        self.server = server
        self.exchange = exchange
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            server.deliver(HTTPResponse(status: 500, text: "no answer\n"), to: exchange)
        }
    }

    /// Takes the one answer this request gets; false if it was already taken.
    func claim() -> Bool {
        answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    /// Sends `response`; returns false, doing nothing, if this request was already answered.
    @discardableResult
    public func respond(_ response: HTTPResponse) -> Bool {
        guard answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        server.deliver(response, to: exchange)
        return true
    }
}
