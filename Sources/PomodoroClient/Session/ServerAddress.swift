import Foundation
import PomodoroCore
import PomodoroNet

/// Where a Pomodoro server's WebSocket endpoint is: parsed from `ws://HOST:PORT[/PATH]`.
public struct ServerAddress: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var path: String

    /// The address used when neither `--server` nor `POMO_SERVER` says otherwise.
    public static let defaultURL = "ws://127.0.0.1:\(WebSocketServerOptions.Defaults.port)"

    public init(host: String, port: Int, path: String = "/ws") {
        self.host = host
        self.port = port
        self.path = path
    }

    /// The path to open for `room`: the room in the query (`/ws?room=NAME`), so that a proxy in front of
    /// several cluster nodes can send every member of a room to the same node (docs/CLUSTER.md). The server
    /// takes the room from `join`, never from here.
    public func path(forRoom room: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        let escaped = room.addingPercentEncoding(withAllowedCharacters: allowed) ?? room
        return path + (path.contains("?") ? "&" : "?") + "room=" + escaped
    }

    /// Why a server URL was refused.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `ws://HOST[:PORT][/PATH]`; `http://` is taken as its WebSocket twin and a bare `HOST:PORT` as
    /// `ws://`. The port defaults to 80 and the path to `/ws`. IPv6 hosts go in brackets: `ws://[::1]:8080`.
    public init(parsing text: String) throws(Invalid) {
        var rest = Substring(text.trimmingWhitespace())
        if let range = rest.range(of: "://") {
            let scheme = rest[..<range.lowerBound].lowercased()
            switch scheme {
            case "ws", "http": break
            case "wss", "https":
                throw Invalid(description: "\(text): TLS (\(scheme)://) is not supported yet; use ws:// behind a proxy")
            default:
                throw Invalid(description: "\(text): the server URL must start with ws://")
            }
            rest = rest[range.upperBound...]
        }
        var path = "/ws"
        if let slash = rest.firstIndex(of: "/") {
            let given = String(rest[slash...])
            if given != "/" { path = given }
            rest = rest[..<slash]
        }
        var host: Substring
        var port = 80
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw Invalid(description: "\(text): unclosed '['") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()) else {
                    throw Invalid(description: "\(text): bad port")
                }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let p = Int(rest[rest.index(after: colon)...]) else { throw Invalid(description: "\(text): bad port") }
            port = p
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw Invalid(description: "\(text): no host") }
        guard (1...65535).contains(port) else { throw Invalid(description: "\(text): the port must be 1–65535") }
        self.init(host: String(host), port: port, path: path)
    }

    /// `ws://host:port`, with the path when it is not the usual `/ws`.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "ws://\(shownHost):\(port)" + (path == "/ws" ? "" : path)
    }

    /// `host:port`, for a title bar.
    public var shortDescription: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}

