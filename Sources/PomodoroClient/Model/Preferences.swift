import Foundation

/// What `pomo join` remembers across runs and rooms: whether the bell and notifications are silenced (`m`),
/// and the local hooks to run at every phase change (`"hooks": {"onPhase": ["command", …]}`, written by hand).
///
/// It lives beside the rooms' state files (`StateFile.directory`), in `preferences.json`. A file that is
/// missing or unreadable means the defaults; a field a later version adds is ignored by this one.
public struct Preferences: Codable, Equatable, Sendable {
    public var silenced: Bool
    public var hooks: Hooks

    /// Commands `pomo join` runs through `/bin/sh -c` (HookRunner), besides those given with `--on-phase`.
    public struct Hooks: Codable, Equatable, Sendable {
        public var onPhase: [String]

        public init(onPhase: [String] = []) { self.onPhase = onPhase }

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            onPhase = try container.decodeIfPresent([String].self, forKey: .onPhase) ?? []
        }
    }

    public init(silenced: Bool = false, hooks: Hooks = Hooks()) {
        self.silenced = silenced
        self.hooks = hooks
    }

    enum CodingKeys: String, CodingKey { case silenced, hooks }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        silenced = try container.decodeIfPresent(Bool.self, forKey: .silenced) ?? false
        // A hooks entry pomo cannot read leaves the silence readable.
        hooks = (try? container.decodeIfPresent(Hooks.self, forKey: .hooks)) ?? Hooks()
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(silenced, forKey: .silenced)
        if hooks != Hooks() { try container.encode(hooks, forKey: .hooks) }
    }

    /// The file for the environment's state folder; nil when there is nowhere to keep it.
    public static func file(environment: [String: String]) -> File? {
        StateFile.directory(environment: environment).map { File(path: $0 + "/preferences.json") }
    }

    /// The preferences file: read whole, written whole (a temporary file, then a rename).
    public struct File: Equatable, Sendable {
        public let path: String

        public init(path: String) { self.path = path }

        public func load() -> Preferences {
            guard let data = FileManager.default.contents(atPath: path),
                  let preferences = try? JSONDecoder().decode(Preferences.self, from: data) else { return Preferences() }
            return preferences
        }

        public func save(_ preferences: Preferences) throws {
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let temporary = path + ".tmp\(getpid())"
            guard FileManager.default.createFile(atPath: temporary, contents: try encoder.encode(preferences),
                                                 attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
            guard rename(temporary, path) == 0 else {
                unlink(temporary)
                throw CocoaError(.fileWriteUnknown)
            }
        }
    }
}
