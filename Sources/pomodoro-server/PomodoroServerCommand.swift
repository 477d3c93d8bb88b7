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
            at /, and GET /healthz. SIGINT or SIGTERM closes every connection with status 1001 and exits 0.

            Every option can also be given as an environment variable, POMODORO_ and the option's name in \
            capitals with _ for - (POMODORO_PORT, POMODORO_MAX_ROOMS), or as a `name = value` line in the \
            --config file. An option beats the environment, which beats the file, which beats the default; \
            --print-config shows the result. A configuration error exits with status 78.
            """)

    @OptionGroup var options: ServerOptions

    func run() throws {
        try ServerMain.run(options)
    }
}
