import ArgumentParser
import PomodoroServerCLI

/// `pomodoro-server`: the options are `ServerOptions`, and the work is `ServerMain` (both in
/// PomodoroServerCLI, where the tests reach them).
@main
struct PomodoroServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pomodoro-server",
        abstract: "Hosts shared focus rooms: one timer per room, owned by the server, seen alike by every member.",
        discussion: """
            Serves, on one port: the WebSocket endpoint at /ws (see docs/PROTOCOL.md), the web page's files \
            at /, GET /healthz (alive) and GET /readyz (ready for clients). SIGINT or SIGTERM turns /readyz to 503, \
            writes what the server had, hands a cluster node's rooms to other nodes, closes every connection \
            with status 1012 (service restart) and exits 0.

            Every option can also be given as an environment variable, POMODORO_ and the option's name in \
            capitals with _ for - (POMODORO_PORT, POMODORO_MAX_ROOMS), or as a `name = value` line in the \
            --config file. An option beats the environment, which beats the file, which beats the default; \
            --print-config shows the result. A configuration error exits with status 78; a database that cannot \
            be opened (PostgreSQL down or out of reach), or a cluster's Redis that refuses the node's password, \
            exits with status 69, after one line naming it.

            `pomodoro-server migrate --from SOURCE --to TARGET` copies a deployment from one database into \
            another (see `pomodoro-server migrate --help`). `pomodoro-server backup --db DATABASE --to FILE` \
            copies an SQLite database while the server runs; `pomodoro-server restore --from FILE --db DATABASE` \
            puts it back into a new one.
            """)

    @OptionGroup var options: ServerOptions

    /// `pomodoro-server migrate …` is a command of its own; everything else runs the server.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "migrate" {
            MigrateCommand.main(Array(arguments.dropFirst()))
        } else if arguments.first == "backup" {
            BackupCommand.main(Array(arguments.dropFirst()))
        } else if arguments.first == "restore" {
            RestoreCommand.main(Array(arguments.dropFirst()))
        } else {
            main(arguments)
        }
    }

    func run() throws {
        try ServerMain.run(options)
    }
}

/// `pomodoro-server migrate --from SOURCE --to TARGET`.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pomodoro-server migrate",
        abstract: MigrateMain.abstract,
        discussion: """
            Copies every room, its members (their resume-token hashes and the room's lock), its schedules, \
            its bans (members the host removed, until their ban ends) and its focus journal, then counts both sides and exits 0 only if the target holds everything the source does. \
            Stop the server first. Running it again copies only what is missing. Databases are named as for \
            --db: a path, sqlite:PATH, or postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME.
            """)

    @OptionGroup var options: MigrateOptions

    func run() throws {
        try MigrateMain.run(options)
    }
}

/// `pomodoro-server backup --db DATABASE --to FILE`.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pomodoro-server backup",
        abstract: BackupMain.backupAbstract,
        discussion: """
            Uses SQLite's online backup: the copy is the database as of one commit, taken while the server \
            goes on writing. The file is checked (PRAGMA integrity_check) and its rooms, members, schedules, \
            bans and journal rows counted. For PostgreSQL use pg_dump (deploy/README.md, Backups).
            """)

    @OptionGroup var options: BackupOptions

    func run() throws {
        try BackupMain.backup(options)
    }
}

/// `pomodoro-server restore --from FILE --db DATABASE`.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pomodoro-server restore",
        abstract: BackupMain.restoreAbstract,
        discussion: """
            The database named by --db must be new or hold no room; stop the server that uses it first. The \
            backup is checked, copied, and opened as the server opens its database. To move a backup into \
            PostgreSQL instead: pomodoro-server migrate --from FILE --to postgres://...
            """)

    @OptionGroup var options: RestoreOptions

    func run() throws {
        try BackupMain.restore(options)
    }
}
