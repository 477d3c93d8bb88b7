import PomodoroServer
import PomodoroServerCLI
import PomodoroTestSupport
import Testing

/// `--db` names a database by path or URL; a URL this server cannot use is refused in one line, and a
/// PostgreSQL password never shows.
@Suite(.computing)
struct DatabaseTests {
    @Test(arguments: [
        ("none", DatabaseLocation.memory),
        ("./data/pomodoro.sqlite", .sqlite(path: "./data/pomodoro.sqlite")),
        ("/var/lib/pomodoro/rooms.db", .sqlite(path: "/var/lib/pomodoro/rooms.db")),
        ("sqlite:/srv/focus.sqlite", .sqlite(path: "/srv/focus.sqlite")),
        ("postgres://focus:secret@db.example:5433/pomodoro?sslmode=require",
         .postgres(url: "postgres://focus:secret@db.example:5433/pomodoro?sslmode=require")),
        ("postgresql://focus@localhost/pomodoro?host=/run/postgresql",
         .postgres(url: "postgresql://focus@localhost/pomodoro?host=/run/postgresql")),
    ])
    func names(text: String, location: DatabaseLocation) throws {
        #expect(try DatabaseLocation(parsing: text) == location)
        #expect(try resolve(["--db", text]).settings.database == location)
    }

    /// Before, `--db postgres://…` made an SQLite file in a folder named `postgres:`; other schemes still would.
    @Test(arguments: ["mysql://root@db/pomodoro", "redis://localhost:6379", "file:///tmp/x.sqlite"])
    func otherSchemesAreRefused(text: String) {
        let scheme = String(text.prefix { $0 != ":" })
        #expect(configurationError(["--db", text])
                == "--db: '\(scheme)://' is not a database this server can use: give a file path, sqlite:PATH, postgres://USER@HOST/DBNAME or none")
    }

    @Test func aSchemeWithoutAPathIsRefused() {
        #expect(configurationError(["--db", "sqlite:"]) == "--db: sqlite: needs a path, e.g. sqlite:./data/pomodoro.sqlite")
        #expect(configurationError(["--db", "postgres://"])?.hasPrefix("--db: 'postgres://' names no host") == true)
    }

    @Test(arguments: [
        ("postgres://focus:s3cr%40t@db:5432/p", "postgres://focus:***@db:5432/p"),
        ("postgresql://focus@db/p?password=hunter2&sslmode=verify-full", "postgresql://focus@db/p?password=***&sslmode=verify-full"),
        ("postgres://:only-a-password@db/p", "postgres://:***@db/p"),
        ("postgres://db/p", "postgres://db/p"),
    ])
    func passwordsAreMasked(url: String, shown: String) throws {
        let location = try DatabaseLocation(parsing: url)
        #expect(location.description == shown)
        #expect(Setting.named("db")?.value(in: try resolve(["--db", url]).settings) == shown)
    }

    @Test func theConfigurationCarriesTheDatabase() throws {
        let url = "postgres://focus:secret@db/pomodoro"
        #expect(try resolve(["--db", url]).settings.serverConfiguration.database == .postgres(url: url))
        #expect(try resolve(["--db", "none"]).settings.serverConfiguration.databasePath == nil)
        #expect(try resolve([]).settings.serverConfiguration.databasePath == "./data/pomodoro.sqlite")
    }
}
