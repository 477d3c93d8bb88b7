import ArgumentParser
import Foundation
import PomodoroServer
import PomodoroSQLite
import PomodoroStore

/// `pomodoro-server backup --db DATABASE --to FILE` and `pomodoro-server restore --from FILE --db DATABASE`:
/// an SQLite deployment copied with SQLite's online backup, page by page inside one read transaction, so a
/// backup taken while the server runs and writes is the database as of one commit. PostgreSQL has its own
/// tools (`pg_dump`, `pg_restore`; deploy/README.md, "Backups").
///
/// What this needs of the store is small on purpose: the `DatabaseLocation` that `--db` already parses, and
/// `SQLiteRoomStore.open` to bring a restored file up to this version's schema. The copy itself is SQLite's
/// own (`SQLiteBackup`, beside the SQLite store), and knows nothing of the store's tables but the names it counts.
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
                try SQLiteBackup.copy(from: source, to: partial)
                let counts = try SQLiteBackup.check(partial)
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
            let counts = try SQLiteBackup.check(backup)
            if FileManager.default.fileExists(atPath: target) {
                let rooms = try SQLiteBackup.rooms(in: target)
                guard rooms == 0 else {
                    throw Failure(message: "--db: \(target) holds \(counted(rooms, "room")); restore into a new database (move this one aside first)",
                                  status: ServerMain.configurationErrorStatus)
                }
            }
            try SQLiteBackup.copy(from: backup, to: target)
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
        } catch let failure as SQLiteBackup.Failure {
            FileHandle.standardError.write(Data("pomodoro-server \(command): \(failure.message)\n".utf8))
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
}
