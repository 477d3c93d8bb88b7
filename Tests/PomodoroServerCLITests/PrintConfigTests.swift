import PomodoroServerCLI
import PomodoroTestSupport
import Testing

/// `--print-config` shows every setting's effective value and where it came from.
@Suite(.computing)
struct PrintConfigTests {
    @Test func everySettingWithItsSource() throws {
        let resolved = try resolve(["--config", "/etc/pomodoro/pomodoro.conf", "--port", "9000"],
                                   environment: ["POMODORO_LOG_FORMAT": "json", "POMODORO_PROT": "1"],
                                   files: ["/etc/pomodoro/pomodoro.conf": "# team\nmax-rooms = 50\n"])
        let lines = resolved.printed.split(separator: "\n").map(String.init)
        #expect(lines.first == "# pomodoro-server: the effective configuration (option > environment > config file > default).")
        #expect(lines.contains("# Config file: /etc/pomodoro/pomodoro.conf"))
        #expect(lines.contains("# warning: POMODORO_PROT is not a setting (did you mean POMODORO_PORT?); it is ignored"))
        #expect(lines.contains("port = 9000                                 # from --port"))
        #expect(lines.contains("log-format = json                           # from POMODORO_LOG_FORMAT"))
        #expect(lines.contains("max-rooms = 50                              # from /etc/pomodoro/pomodoro.conf:2"))
        #expect(lines.contains("log-level = info                            # default"))
        #expect(lines.contains("# host =                                    # unset: every interface"))
        #expect(lines.contains("# tls-cert =                                # unset: plain HTTP"))
        for setting in Setting.all {
            #expect(lines.contains { $0.hasPrefix("\(setting.name) = ") || $0.hasPrefix("# \(setting.name) =") },
                    "\(setting.name) is printed")
        }
    }
}
