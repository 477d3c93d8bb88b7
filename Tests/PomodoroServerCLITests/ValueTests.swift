import PomodoroServerCLI
import PomodoroTestSupport
import Testing

/// Bad values are refused with the setting, where the value came from, and what is allowed.
@Suite(.computing)
struct ValueTests {
    @Test(arguments: [
        (["--port", "http"], [:], "--port: 'http' is not a whole number"),
        (["--port", "65536"], [:], "--port: 65536 is out of range: 0–65535"),
        ([], ["POMODORO_PORT": "-1"], "POMODORO_PORT: -1 is out of range: 0–65535"),
        ([], ["POMODORO_PORT": "8o8o"], "POMODORO_PORT: '8o8o' is not a whole number"),
        (["--reconnect-grace=-5"], [:], "--reconnect-grace: -5 is out of range: at least 0"),
        ([], ["POMODORO_MAX_MESSAGE_BYTES": "100"], "POMODORO_MAX_MESSAGE_BYTES: 100 is out of range: 256–1048576"),
        (["--max-name-length", "0"], [:], "--max-name-length: 0 is out of range: 1–200"),
        (["--max-task-length", "10001"], [:], "--max-task-length: 10001 is out of range: 0–10000"),
        (["--messages-per-second", "0"], [:], "--messages-per-second: 0 is out of range: at least 1"),
        (["--max-queued-bytes", "100"], [:], "--max-queued-bytes: 100 is out of range: at least 4096"),
        (["--handshake-timeout", "301"], [:], "--handshake-timeout: 301 is out of range: 1–300"),
        (["--log-level", "verbose"], [:],
         "--log-level: 'verbose' is not one of trace, debug, info, notice, warning, error, critical"),
        ([], ["POMODORO_LOG_FORMAT": "JSON"], "POMODORO_LOG_FORMAT: 'JSON' is not one of text, json"),
        ([], ["POMODORO_METRICS": "false"], "POMODORO_METRICS: 'false' is not one of on, off"),
        (["--allowed-origin", "https://focus.example.com/"], [:],
         "--allowed-origin: 'https://focus.example.com/' is not an origin: scheme://host[:port], with no path or trailing slash"),
        (["--allowed-origin", "https://ok.example", "--allowed-origin", "ws://focus.example.com"], [:],
         "--allowed-origin: 'ws://focus.example.com' is not an origin such as https://focus.example.com"),
        (["--trusted-proxy", "127.0.0.1/33"], [:],
         "--trusted-proxy: '127.0.0.1/33' is not an address or CIDR block such as 127.0.0.1/32 or ::1/128"),
        ([], ["POMODORO_TRUSTED_PROXY": "loopback"],
         "POMODORO_TRUSTED_PROXY: 'loopback' is not an address or CIDR block such as 127.0.0.1/32 or ::1/128"),
        (["--tls-cert", "c.pem"], [:], "tls-cert (from --tls-cert) needs tls-key as well: give both or neither"),
        ([], ["POMODORO_TLS_KEY": "k.pem"], "tls-key (from POMODORO_TLS_KEY) needs tls-cert as well: give both or neither"),
        (["--ping-after", "90"], [:],
         "hang-up-after (75, from the default) must be more than ping-after (90, from --ping-after)"),
        (["--hang-up-after", "30"], ["POMODORO_PING_AFTER": "30"],
         "hang-up-after (30, from --hang-up-after) must be more than ping-after (30, from POMODORO_PING_AFTER)"),
    ] as [([String], [String: String], String)])
    func badValuesAreClearErrors(arguments: [String], environment: [String: String], message: String) {
        #expect(configurationError(arguments, environment: environment) == message)
    }

    /// A bad value in a source that loses is never read.
    @Test func aLosingSourceIsNotChecked() throws {
        let resolved = try resolve(["--port", "1"], environment: ["POMODORO_PORT": "not a port"])
        #expect(resolved.settings.port == 1)
    }

    @Test func unknownOptionsAreTheParsersErrors() {
        #expect(throws: (any Error).self) { try resolve(["--prot", "1"]) }
        #expect(throws: (any Error).self) { try resolve(["--port"]) }
    }
}
