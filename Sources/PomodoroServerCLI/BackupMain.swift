import ArgumentParser
import Foundation
import GRDB
import PomodoroServer
import PomodoroStore

/// `pomodoro-server backup --db DATABASE --to FILE` and `pomodoro-server restore --from FILE --db DATABASE`:
/// an SQLite deployment copied with SQLite's online backup, page by page inside one read transaction, so a
/// backup taken while the server runs and writes is the database as of one commit. PostgreSQL has its own
/// tools (`pg_dump`, `pg_restore`; deploy/README.md, "Backups").
///
/// What this needs of the store is small on purpose: the `DatabaseLocation` that `--db` already parses, and
/// `SQLiteRoomStore.open` to bring a restored file up to this version's schema. The copy itself is SQLite's
/// own (through GRDB), and knows nothing of the store's tables; the counts printed read four tables by name.
public struct BackupOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: "The SQLite database to back up: a path or sqlite:PATH (as for the server's --db).")
    public var db: String
    @Option(name: .customLong("to"), help: "The backup file to write; it must not exist yet.")
    public var to: String

    public init() {}
}

public struct RestoreOptions: ParsableArguments {
    @Option(name: .customLong("from"), help: "The backup file written by `pomodoro-server backup`.")
    public var from: String
    @Option(name: .customLong("db"), help: "The SQLite database to restore into: a path or sqlite:PATH; it must hold no room.")
    public var db: String

    public init() {}
}

public enum BackupMain {
    public static let backupAbstract = "Copies an SQLite database into a backup file, while the server runs if it does."
    public static let restoreAbstract = "Restores a backup file into a new SQLite database (stop the server first)."

    /// What went wrong, as one line; `status` is the exit status (78 for arguments, 1 for the rest).
    struct Failure: Error {
        let message: String
        var status: Int32 = 1
    }

    /// Writes the backup, checks it (`PRAGMA integrity_check`) and prints what it holds.
    public static func backup(_ options: BackupOptions, output: (String) -> Void = { print($0) }) throws {
        try reporting("backup") {
            let source = try sqlitePath(options.db, role: "--db")
            guard FileManager.default.fileExists(atPath: source) else {
                throw Failure(message: "--db: no database at \(source)", status: ServerMain.configurationErrorStatus)
            }
            let target = options.to
            guard !FileManager.default.fileExists(atPath: target) else {
                throw Failure(message: "--to: \(target) exists already; name a new file", status: ServerMain.configurationErrorStatus)
            }
            let folder = (target as NSString).deletingLastPathComponent
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw Failure(message: "--to: no folder \(folder) to write \(target) in", status: ServerMain.configurationErrorStatus)
            }
            // Written beside the target and renamed once complete and checked: a file named as the backup
            // is always a whole one.
            let partial = target + ".partial"
            try? FileManager.default.removeItem(atPath: partial)
            do {
                try copy(from: source, to: partial, sourceReadOnly: true)
                let counts = try check(partial)
                guard rename(partial, target) == 0 else {
                    throw Failure(message: "cannot rename \(partial) to \(target): \(String(cString: strerror(errno)))")
                }
                output("backed up \(source) into \(target): \(counts)")
            } catch {
                try? FileManager.default.removeItem(atPath: partial)
                throw error
            }
        }
    }

    /// Checks the backup, copies it into the target (which must be new or hold no room), then opens it as
    /// the server would, so an older backup is brought up to this version's schema.
    public static func restore(_ options: RestoreOptions, output: (String) -> Void = { print($0) }) throws {
        try reporting("restore") {
            let backup = options.from
            guard FileManager.default.fileExists(atPath: backup) else {
                throw Failure(message: "--from: no backup at \(backup)", status: ServerMain.configurationErrorStatus)
            }
            let target = try sqlitePath(options.db, role: "--db")
            let counts = try check(backup)
            if FileManager.default.fileExists(atPath: target) {
                let rooms = try DatabaseQueue(path: target, configuration: readOnly()).read { db in
                    try db.tableExists("room") ? Int.fetchOne(db, sql: "SELECT count(*) FROM room") ?? 0 : 0
                }
                guard rooms == 0 else {
                    throw Failure(message: "--db: \(target) holds \(rooms) rooms; restore into a new database (move this one aside first)")
                }
            }
            try copy(from: backup, to: target, sourceReadOnly: true)
            do {
                try SQLiteRoomStore.open(path: target, retention: .keepEverything).close()
            } catch {
                throw Failure(message: "the restored database does not open as a store: \(error)")
            }
            output("restored \(backup) into \(target): \(counts)")
        }
    }

    // MARK: Parts

    private static func reporting(_ command: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as Failure {
            FileHandle.standardError.write(Data("pomodoro-server \(command): \(failure.message)\n".utf8))
            throw ExitCode(failure.status)
        } catch let error as DatabaseError {
            FileHandle.standardError.write(Data("pomodoro-server \(command): SQLite: \(error.message ?? "\(error)")\n".utf8))
            throw ExitCode(1)
        }
    }

    /// The file an SQLite `--db` names; PostgreSQL and `none` are refused with what to use instead.
    static func sqlitePath(_ text: String, role: String) throws -> String {
        let location: DatabaseLocation
        do {
            location = try DatabaseLocation(parsing: text)
        } catch {
            throw Failure(message: "\(role): \(error.reason)", status: ServerMain.configurationErrorStatus)
        }
        switch location {
        case .sqlite(let path): return path
        case .postgres:
            throw Failure(message: "\(role): \(location) is PostgreSQL: back it up with pg_dump and restore it with pg_restore (deploy/README.md, Backups)",
                          status: ServerMain.configurationErrorStatus)
        case .memory:
            throw Failure(message: "\(role): none keeps nothing to back up or restore", status: ServerMain.configurationErrorStatus)
        }
    }

    private static func readOnly() -> Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        // The server's writer holds its lock for a batch at a time; wait for it rather than fail.
        configuration.busyMode = .timeout(10)
        return configuration
    }

    /// SQLite's online backup of `source` into `target`, all pages in one step within one read transaction.
    private static func copy(from source: String, to target: String, sourceReadOnly: Bool) throws {
        let from = try DatabaseQueue(path: source, configuration: sourceReadOnly ? readOnly() : Configuration())
        var writing = Configuration()
        writing.busyMode = .timeout(10)
        let to = try DatabaseQueue(path: target, configuration: writing)
        try from.backup(to: to)
        // One self-contained file, whatever the source's journal mode: no -wal or -shm to carry with it.
        try to.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode=DELETE") }
        try from.close()
        try to.close()
    }

    /// `PRAGMA integrity_check` on `path`, and what it holds, as a line.
    private static func check(_ path: String) throws -> String {
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
            return "\(try count("room")) rooms, \(try count("member")) members, \(try count("schedule")) schedules, "
                + "\(try count("room_ban")) bans, \(try count("focus_session")) focus sessions, "
                + "\(try count("interruption")) interruptions"
        }
    }
}
