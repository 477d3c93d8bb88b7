/// Where the cluster's Redis is: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or the master that Redis
/// Sentinel names: `redis-sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]…]/MASTER_NAME[/DB]` (the
/// sentinels, then the name they monitor; the credentials and database are the master's).
///
/// ```swift
/// let address = try RedisAddress(parsing: "redis://:s3cret@10.0.0.5:6380/2")
/// address.redacted  // "redis://:***@10.0.0.5:6380/2"
/// let watched = try RedisAddress(parsing: "redis-sentinel://10.0.0.7,10.0.0.8:26380/pomodoro")
/// watched.sentinels  // [10.0.0.7:26379, 10.0.0.8:26380]; every new connection asks them for the master
/// ```
/// The password never appears in `redacted` nor in `description`, which logs and `--print-config` use.
public struct RedisAddress: Equatable, Sendable, CustomStringConvertible {
    /// The Redis connected to (with sentinels: the first sentinel, until one names the master).
    public var host: String
    public var port: Int
    public var database: Int
    public var user: String?
    public var password: String?
    /// The sentinels asked for the master (empty: `host` and `port` are the Redis itself).
    public var sentinels: [Endpoint] = []
    /// The master's name at the sentinels (`sentinel monitor NAME …`); nil without sentinels.
    public var masterName: String?

    /// One server's host and port.
    public struct Endpoint: Equatable, Sendable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    public static let defaultPort = 6379
    public static let defaultSentinelPort = 26_379

    /// The master named `masterName` as `sentinels` know it.
    public init(sentinels: [Endpoint], masterName: String, database: Int = 0, user: String? = nil,
                password: String? = nil) {
        self.init(host: sentinels.first?.host ?? "", port: sentinels.first?.port ?? Self.defaultSentinelPort,
                  database: database, user: user, password: password)
        self.sentinels = sentinels
        self.masterName = masterName
    }

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
        let sentinelScheme = "redis-sentinel://"
        if url.lowercased().hasPrefix(sentinelScheme) {
            try self.init(parsingSentinels: Substring(url.dropFirst(sentinelScheme.count)))
            return
        }
        let scheme = "redis://"
        guard url.lowercased().hasPrefix(scheme) else {
            throw Invalid(description: "the cluster address must start with redis:// (redis://HOST[:PORT][/DB]) or redis-sentinel:// (redis-sentinel://HOST[:PORT][,HOST[:PORT]…]/MASTER_NAME[/DB])")
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
        let (user, password, hostPart) = Self.credentials(rest)
        rest = hostPart
        let (host, port) = try Self.endpoint(rest, defaultPort: Self.defaultPort)
        self.init(host: host, port: port, database: database, user: user, password: password)
    }

    /// After `redis-sentinel://`: `[CREDENTIALS@]SENTINEL[,SENTINEL…]/MASTER_NAME[/DB]`.
    private init(parsingSentinels text: Substring) throws(Invalid) {
        let usage = "redis-sentinel://HOST[:PORT][,HOST[:PORT]…]/MASTER_NAME[/DB]"
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 2, !parts[1].isEmpty else {
            throw Invalid(description: "the sentinel address names no master (\(usage))")
        }
        guard parts.count <= 3 else { throw Invalid(description: "the sentinel address has too many parts (\(usage))") }
        let name = String(parts[1])
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw Invalid(description: "the master's name may hold letters, digits, '-', '_' and '.', not \(name.debugDescription)")
        }
        var database = 0
        if parts.count == 3, !parts[2].isEmpty {
            guard let number = Int(parts[2]), number >= 0 else {
                throw Invalid(description: "the Redis database must be a number from 0, not \(String(parts[2]).debugDescription)")
            }
            database = number
        }
        let (user, password, hosts) = Self.credentials(parts[0])
        var sentinels: [Endpoint] = []
        for item in hosts.split(separator: ",", omittingEmptySubsequences: false) {
            let (host, port) = try Self.endpoint(item, defaultPort: Self.defaultSentinelPort)
            sentinels.append(Endpoint(host: host, port: port))
        }
        self.init(sentinels: sentinels, masterName: name, database: database, user: user, password: password)
    }

    /// `[[USER]:PASSWORD@]REST`: the credentials, percent-escapes decoded, and what follows them.
    private static func credentials(_ text: Substring) -> (user: String?, password: String?, rest: Substring) {
        var rest = text
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
        return (user, password, rest)
    }

    /// `HOST[:PORT]` or `[IPV6][:PORT]`.
    private static func endpoint(_ rest: Substring, defaultPort: Int) throws(Invalid) -> (String, Int) {
        var host = rest, port = defaultPort
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { port = try Self.port(after.dropFirst()) }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            port = try Self.port(rest[rest.index(after: colon)...])
        }
        guard !host.isEmpty else { throw Invalid(description: "the cluster address has no host (redis://HOST[:PORT][/DB])") }
        return (String(host), port)
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
        if let masterName {
            return "redis-sentinel://\(credentials)\(sentinels.map(\.description).joined(separator: ","))/\(masterName)"
                + (database == 0 ? "" : "/\(database)")
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
