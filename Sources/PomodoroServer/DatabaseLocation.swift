import PomodoroPostgres
import PomodoroStore
import PomodoroSQLite

/// Where the server keeps rooms, members and the focus journal, as `--db` (or `POMODORO_DB`, or `db` in the
/// config file) names it.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    /// Nothing is kept: everything is lost at exit (`none`).
    case memory
    /// An SQLite file, its folder created if missing (a path, or `sqlite:PATH`).
    case sqlite(path: String)
    /// A PostgreSQL database (`postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME`, also `postgresql://`; query
    /// parameters such as `?sslmode=require` or `?host=/run/postgresql` for a Unix socket go to libpq as they are).
    case postgres(url: String)

    /// Why a value names no database this server can use.
    public struct Problem: Error, Equatable, Sendable {
        public let reason: String
    }

    /// Reads a `--db` value. Any `scheme://` other than PostgreSQL's is refused rather than taken for a file
    /// path (which would quietly make an SQLite file under a folder named after the scheme).
    public init(parsing text: String) throws(Problem) {
        if text == "none" {
            self = .memory
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            guard let rest = text.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).last,
                  !rest.isEmpty else {
                throw Problem(reason: "'\(PostgresRoomStore.redacted(text))' names no host: use postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME")
            }
            self = .postgres(url: text)
        } else if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw Problem(reason: "sqlite: needs a path, e.g. sqlite:./data/pomodoro.sqlite") }
            self = .sqlite(path: path)
        } else if let scheme = text.range(of: "://").map({ String(text[..<$0.lowerBound]) }),
                  !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) {
            throw Problem(reason: "'\(scheme)://' is not a database this server can use: give a file path, sqlite:PATH, postgres://USER@HOST/DBNAME or none")
        } else if text.isEmpty {
            throw Problem(reason: "the database is empty: give a file path, sqlite:PATH, postgres://USER@HOST/DBNAME or none")
        } else {
            self = .sqlite(path: text)
        }
    }

    /// As logs and `--print-config` show it: a PostgreSQL password replaced by `***`.
    public var description: String {
        switch self {
        case .memory: "none"
        case .sqlite(let path): path
        case .postgres(let url): PostgresRoomStore.redacted(url)
        }
    }
}

extension DatabaseLocation {
    /// Opens the store this names (nil for `.memory`), migrated to the current schema.
    public func open(retention: JournalRetention = .standard) throws(StoreError) -> (any RoomStore)? {
        switch self {
        case .memory:
            return nil
        case .sqlite(let path):
            return try SQLiteRoomStore.open(path: path, retention: retention)
        case .postgres(let url):
            return try PostgresRoomStore.open(url: url, retention: retention)
        }
    }
}
