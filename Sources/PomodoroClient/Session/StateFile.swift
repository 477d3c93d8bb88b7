import Foundation

/// The small file that keeps `pomo join`'s resume token for one room on one server, so a restarted client
/// gets its member (and its count of focus sessions) back within the server's grace period.
///
/// It lives at `$XDG_STATE_HOME/pomo/ROOM@HOST_PORT.json`, or `~/.local/state/pomo/…` when
/// `XDG_STATE_HOME` is unset, empty or relative (the XDG spec says to ignore a relative one). Room names
/// cannot contain `@` and ports are digits, so every server and room maps to its own file. The folder is
/// made 0700 and the file 0600: the token is a secret. The commands that act as that member (the control
/// commands, `pomo token`, the host's commands) find it one way, `kept`: under the address they are given
/// first, then among the room's files of other addresses (`elsewhere`). The server recognises only the tokens
/// it gave, so showing it another server's token is harmless.
public struct StateFile: Equatable, Sendable {
    /// What the file holds.
    public struct Contents: Codable, Equatable, Sendable {
        public var server: String
        public var room: String
        public var name: String
        public var member: String
        public var token: String
        public init(server: String, room: String, name: String, member: String, token: String) {
            self.server = server
            self.room = room
            self.name = name
            self.member = member
            self.token = token
        }
    }

    public let path: String

    public init(path: String) { self.path = path }

    /// The folder for pomo's state, from the environment; nil when neither XDG_STATE_HOME nor HOME helps.
    public static func directory(environment: [String: String]) -> String? {
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return trimmingSlashes(xdg) + "/pomo"
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return trimmingSlashes(home) + "/.local/state/pomo"
        }
        return nil
    }

    /// The state file for `room` on `server`; nil when there is nowhere to keep it.
    public static func location(environment: [String: String], server: ServerAddress, room: String) -> StateFile? {
        guard let directory = directory(environment: environment) else { return nil }
        let host = server.host.map { $0 == "/" ? "_" : $0 }
        return StateFile(path: "\(directory)/\(room)@\(String(host))_\(server.port).json")
    }

    /// The state files of `room` kept for every other server address, newest first: on a cluster any node
    /// serves any room, and `pomo join` may have gone through another node (or its proxy, or another name of
    /// the same server) than the command that looks for its member now.
    public static func elsewhere(environment: [String: String], server: ServerAddress, room: String) -> [StateFile] {
        guard let directory = directory(environment: environment),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        let own = location(environment: environment, server: server, room: room)?.path
        let kept = names.filter { $0.hasPrefix(room + "@") && $0.hasSuffix(".json") }
            .map { StateFile(path: "\(directory)/\($0)") }
            .filter { $0.path != own }
        func modified(_ file: StateFile) -> Date {
            (try? FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date) ?? .distantPast
        }
        return kept.map { ($0, modified($0)) }.sorted { $0.1 > $1.1 }.map(\.0)
    }

    /// The members `pomo join` keeps for a room, as the commands that act as one find them.
    public struct Kept: Equatable, Sendable {
        /// The member kept under the address given, if there is one.
        public let here: Contents?
        /// The room's members kept under other addresses (`elsewhere`), newest first: looked for only when
        /// there is none `here`.
        public let elsewhere: [Contents]

        public init(here: Contents?, elsewhere: [Contents]) {
            self.here = here
            self.elsewhere = elsewhere
        }

        /// Those to try in turn: `here` alone when there is one, else `elsewhere`; empty when `pomo join`
        /// keeps none for the room.
        public var members: [Contents] { here.map { [$0] } ?? elsewhere }
    }

    /// The members kept for `room`, looked for under `server` first and under other addresses only when there
    /// is none there. Unreadable files are left out.
    public static func kept(environment: [String: String], server: ServerAddress, room: String) -> Kept {
        if let here = location(environment: environment, server: server, room: room)?.load() {
            return Kept(here: here, elsewhere: [])
        }
        let others = elsewhere(environment: environment, server: server, room: room)
        return Kept(here: nil, elsewhere: others.compactMap { $0.load() })
    }

    private static func trimmingSlashes(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        return p == "/" ? "" : String(p)
    }

    /// The stored contents, or nil when there is no readable file.
    public func load() -> Contents? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(Contents.self, from: data)
    }

    /// Writes the contents atomically (temporary file, then rename), private to the user.
    public func save(_ contents: Contents) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(contents)
        let temporary = path + ".tmp\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: data,
                                             attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    /// Removes the file (after leaving the room for good).
    public func remove() { unlink(path) }
}
