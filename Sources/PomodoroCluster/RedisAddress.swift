/// Where the cluster's Redis is: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`.
///
/// ```swift
/// let address = try RedisAddress(parsing: "redis://:s3cret@10.0.0.5:6380/2")
/// address.redacted  // "redis://:***@10.0.0.5:6380/2"
/// ```
/// The password never appears in `redacted` nor in `description`, which logs and `--print-config` use.
public struct RedisAddress: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var database: Int
    public var user: String?
    public var password: String?

    public static let defaultPort = 6379

    public init(host: String, port: Int = defaultPort, database: Int = 0, user: String? = nil,
                password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.password = password
    }

    /// A malformed address: says what is wrong, never the password.
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Parses a `redis://` URL. Percent-escapes in the user and password are decoded.
    /// - Throws: `Invalid` for another scheme, a missing host, a port outside 1…65535 or a database that is
    ///   not a number from 0.
    public init(parsing url: String) throws(Invalid) {
        let scheme = "redis://"
        guard url.lowercased().hasPrefix(scheme) else {
            throw Invalid(description: "the cluster address must start with redis:// (redis://HOST[:PORT][/DB])")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let text = rest[rest.index(after: slash)...]
            if !text.isEmpty {
                guard let number = Int(text), number >= 0 else {
                    throw Invalid(description: "the Redis database must be a number from 0, not \(String(text).debugDescription)")
                }
                database = number
            }
            rest = rest[..<slash]
        }
        var user: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let name = String(credentials[..<colon])
                user = name.isEmpty ? nil : (name.removingPercentEscapes ?? name)
                let secret = String(credentials[credentials.index(after: colon)...])
                password = secret.removingPercentEscapes ?? secret
            } else if !credentials.isEmpty {
                // `redis://SECRET@host`: a lone credential is the password, as redis-cli reads it.
                password = String(credentials).removingPercentEscapes ?? String(credentials)
            }
        }
        var host = rest, port = Self.defaultPort
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { port = try Self.port(after.dropFirst()) }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            port = try Self.port(rest[rest.index(after: colon)...])
        }
        guard !host.isEmpty else { throw Invalid(description: "the cluster address has no host (redis://HOST[:PORT][/DB])") }
        self.init(host: String(host), port: port, database: database, user: user, password: password)
    }

    private static func port(_ text: Substring) throws(Invalid) -> Int {
        guard let port = Int(text), (1...65_535).contains(port) else {
            throw Invalid(description: "the Redis port must be a number from 1 to 65535, not \(String(text).debugDescription)")
        }
        return port
    }

    /// The address as a URL with the password as `***`.
    public var redacted: String {
        let credentials: String
        switch (user, password) {
        case (let user?, _?): credentials = "\(user):***@"
        case (nil, _?): credentials = ":***@"
        case (let user?, nil): credentials = "\(user)@"
        case (nil, nil): credentials = ""
        }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "redis://\(credentials)\(hostPart):\(port)" + (database == 0 ? "" : "/\(database)")
    }

    public var description: String { redacted }
}

extension String {
    /// `%XX` escapes decoded; nil when an escape is malformed or the bytes are not UTF-8.
    fileprivate var removingPercentEscapes: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
