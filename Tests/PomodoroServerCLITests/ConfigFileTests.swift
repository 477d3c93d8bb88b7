import PomodoroServerCLI
import PomodoroTestSupport
import Testing

/// The config file: `name = value` lines, comments, quotes, and errors that name the line.
@Suite(.computing)
struct ConfigFileTests {
    func fileResolve(_ text: String) throws -> ResolvedConfiguration {
        try resolve(["--config", "/etc/pomodoro/pomodoro.conf"], files: ["/etc/pomodoro/pomodoro.conf": text])
    }

    func fileError(_ text: String) -> String? {
        configurationError(["--config", "/etc/pomodoro/pomodoro.conf"], files: ["/etc/pomodoro/pomodoro.conf": text])
    }

    @Test func commentsBlankLinesQuotesAndWindowsLineEnds() throws {
        let resolved = try fileResolve("""
            # Pomodoro for the design team
            \r
              port=9001   # behind nginx\r
            host = "127.0.0.1"
            web-root = "/srv/web #2"   # a quoted value keeps its ' #'
            \tlog-level\t=\twarning
            """)
        #expect(resolved.settings.port == 9001)
        #expect(resolved.settings.host == "127.0.0.1")
        #expect(resolved.settings.webRoot == "/srv/web #2")
        #expect(resolved.settings.logLevel == .warning)
        #expect(resolved.sources["host"] == .file(path: "/etc/pomodoro/pomodoro.conf", line: 4))
    }

    @Test(arguments: [
        ("port = 1\nprot = 2\n", "/etc/pomodoro/pomodoro.conf:2: unknown setting 'prot' (did you mean 'port'?)"),
        ("max_rooms = 5", "/etc/pomodoro/pomodoro.conf:1: unknown setting 'max_rooms' (did you mean 'max-rooms'?)"),
        ("\n\nPOMODORO_PORT = 5", "/etc/pomodoro/pomodoro.conf:3: unknown setting 'POMODORO_PORT' (did you mean 'port'?)"),
        ("--port = 5", "/etc/pomodoro/pomodoro.conf:1: unknown setting '--port' (did you mean 'port'?)"),
        ("database = /var/lib/x.db", "/etc/pomodoro/pomodoro.conf:1: unknown setting 'database'"),
        ("# ok\nport 8080", "/etc/pomodoro/pomodoro.conf:2: expected `name = value`, found 'port 8080'"),
        ("host =   # nothing", "/etc/pomodoro/pomodoro.conf:1: host has no value (leave the line out for the default)"),
        ("port = 1\n\nport = 2", "/etc/pomodoro/pomodoro.conf:3: port is already set on line 1"),
        ("host = \"::1", "/etc/pomodoro/pomodoro.conf:1: the value of host has no closing quote"),
        ("host = \"::1\" x", "/etc/pomodoro/pomodoro.conf:1: unexpected 'x' after the quoted value of host"),
        ("port = 8080 # fine\nmax-rooms = many", "/etc/pomodoro/pomodoro.conf:2: max-rooms: 'many' is not a whole number"),
        ("allowed-origin = https://a.example\nallowed-origin = focus.example.com",
         "/etc/pomodoro/pomodoro.conf:2: allowed-origin: 'focus.example.com' is not an origin such as https://focus.example.com"),
    ])
    func errorsNameTheLine(text: String, message: String) {
        #expect(fileError(text) == message)
    }

    /// `--print-config` prints a valid config file: reading it back gives the same configuration.
    @Test func printedConfigurationReadsBack() throws {
        let original = try resolve(["--host", "::1", "--web-root", "/srv/my web #1", "--allowed-origin",
                                    "https://a.example,https://b.example", "--tls-cert", "c.pem", "--tls-key", "k.pem"],
                                   environment: ["POMODORO_MAX_ROOMS": "12", "POMODORO_LOG_FORMAT": "json"])
        let again = try resolve(["--config", "printed"], files: ["printed": original.printed])
        #expect(again.settings == original.settings)
        let unset = try resolve()
        #expect(try resolve(["--config", "printed"], files: ["printed": unset.printed]).settings == unset.settings)
    }
}
