import Foundation
import GRDB
import PomodoroStore

/// SQLite's online backup of a database file, and the checks around it (`pomodoro-server backup` and
/// `restore`). The copy is SQLite's own, page by page inside one read transaction, so a backup taken while
/// the server runs and writes is the database as of one commit; it knows nothing of the store's tables but
/// the names it counts.
public enum SQLiteBackup {
    /// What went wrong, as one line.
    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Copies `source` into `target` (a new file, or one to overwrite), all pages in one step, and leaves
    /// `target` as one self-contained file whatever the source's journal mode (no -wal or -shm beside it).
    public static func copy(from source: String, to target: String) throws(Failure) {
        try sqlite {
            let from = try DatabaseQueue(path: source, configuration: readOnly())
            var writing = Configuration()
            writing.busyMode = .timeout(10)
            let to = try DatabaseQueue(path: target, configuration: writing)
            try from.backup(to: to)
            try to.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode=DELETE") }
            try from.close()
            try to.close()
        }
    }

    /// `PRAGMA integrity_check` on `path`, and what it holds, as a line ("3 rooms, 5 members, …").
    public static func check(_ path: String) throws(Failure) -> String {
        try sqlite {
            let queue = try DatabaseQueue(path: path, configuration: readOnly())
            defer { try? queue.close() }
            return try queue.read { db in
                let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard integrity == ["ok"] else {
                    throw Failure(message: "\(path) fails SQLite's integrity check: \(integrity.prefix(3).joined(separator: "; "))")
                }
                guard try db.tableExists("room") else {
                    throw Failure(message: "\(path) is an SQLite database but not a Pomodoro one (no room table)")
                }
                func count(_ table: String) throws -> Int {
                    try db.tableExists(table) ? Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0 : 0
                }
                return try [("room", "room"), ("member", "member"), ("schedule", "schedule"), ("room_ban", "ban"),
                            ("focus_session", "focus session"), ("interruption", "interruption")]
                    .map { table, noun in counted(try count(table), noun) }.joined(separator: ", ")
            }
        }
    }

    /// The rooms an existing database holds (0 for one with no room table yet).
    public static func rooms(in path: String) throws(Failure) -> Int {
        try sqlite {
            try DatabaseQueue(path: path, configuration: readOnly()).read { db in
                try db.tableExists("room") ? Int.fetchOne(db, sql: "SELECT count(*) FROM room") ?? 0 : 0
            }
        }
    }

    private static func readOnly() -> Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        // The server's writer holds its lock for a batch at a time; wait for it rather than fail.
        configuration.busyMode = .timeout(10)
        return configuration
    }

    /// SQLite's errors as one line; a `Failure` of ours passes through.
    private static func sqlite<T>(_ body: () throws -> T) throws(Failure) -> T {
        do {
            return try body()
        } catch let failure as Failure {
            throw failure
        } catch let error as DatabaseError {
            throw Failure(message: "SQLite: \(error.message ?? "\(error)")")
        } catch {
            throw Failure(message: "SQLite: \(error)")
        }
    }
}
