import PomodoroNet
import PomodoroServerCLI
import PomodoroTestSupport
import PomodoroStore
import Testing

/// Option > environment > config file > default, for every setting.
@Suite(.computing)
struct PrecedenceTests {
    @Test func nothingGivenIsTheDefaults() throws {
        let resolved = try resolve()
        #expect(resolved.settings == ServerSettings())
        #expect(resolved.configFile == nil)
        #expect(resolved.warnings.isEmpty)
        for setting in Setting.all { #expect(resolved.sources[setting.name] == .defaultValue, "\(setting.name)") }
    }

    @Test(arguments: [
        // option, environment, file → port and where it came from
        (true, true, true, 1111, "--port"),
        (false, true, true, 2222, "POMODORO_PORT"),
        (false, false, true, 3333, "pomodoro.conf:1"),
        (true, false, true, 1111, "--port"),
        (true, true, false, 1111, "--port"),
        (false, false, false, 8080, "default"),
    ])
    func theFirstSourceThatGivesAValueWins(option: Bool, environment: Bool, file: Bool, port: Int, source: String)
        throws {
        let resolved = try resolve(["--config", "pomodoro.conf"] + (option ? ["--port", "1111"] : []),
                                   environment: environment ? ["POMODORO_PORT": "2222"] : [:],
                                   files: ["pomodoro.conf": file ? "port = 3333\n" : "# nothing\n"])
        #expect(resolved.settings.port == port)
        #expect(resolved.sources["port"]?.description == source)
    }

    @Test func sourcesMixPerSetting() throws {
        let resolved = try resolve(["--config", "/etc/pomodoro.conf", "--host", "::1"],
                                   environment: ["POMODORO_PORT": "9000", "POMODORO_HOST": "127.0.0.1"],
                                   files: ["/etc/pomodoro.conf": "host = 0.0.0.0\nport = 1\nmax-rooms = 7\n"])
        #expect(resolved.settings.host == "::1")
        #expect(resolved.settings.port == 9000)
        #expect(resolved.settings.limits.maxRooms == 7)
        #expect(resolved.settings.logLevel == .info)
        #expect(resolved.sources["host"] == .option("--host"))
        #expect(resolved.sources["port"] == .environment("POMODORO_PORT"))
        #expect(resolved.sources["max-rooms"] == .file(path: "/etc/pomodoro.conf", line: 3))
        #expect(resolved.sources["log-level"] == .defaultValue)
    }

    @Test func everySettingHasASample() {
        #expect(Set(samples.keys) == Set(Setting.all.map(\.name)))
    }

    /// Each setting reaches the effective configuration from each source, under its one name.
    @Test(arguments: Setting.all.map(\.name))
    func everySettingFromEverySource(name: String) throws {
        let setting = try #require(Setting.named(name))
        let names = [name] + (partners[name].map { [$0] } ?? [])
        let expected = samples[name]!

        let byOption = try resolve(names.flatMap { ["--\($0)", samples[$0]!] })
        #expect(setting.value(in: byOption.settings) == expected)
        #expect(byOption.sources[name] == .option("--\(name)"))

        let environment = Dictionary(uniqueKeysWithValues: names.map { (Setting.named($0)!.environmentVariable, samples[$0]!) })
        let byEnvironment = try resolve(environment: environment)
        #expect(setting.value(in: byEnvironment.settings) == expected)
        #expect(byEnvironment.sources[name] == .environment(setting.environmentVariable))

        let text = names.map { "\($0) = \(samples[$0]!)" }.joined(separator: "\n")
        let byFile = try resolve(["--config", "p.conf"], files: ["p.conf": text])
        #expect(setting.value(in: byFile.settings) == expected)
        #expect(byFile.sources[name] == .file(path: "p.conf", line: 1))

        #expect(setting.value(in: ServerSettings()) != expected, "the sample differs from the default")
    }

    /// Pinned, not derived: a rename here breaks every admin's environment file.
    @Test func environmentVariableNames() {
        #expect(Setting.all.map(\.environmentVariable) == [
            "POMODORO_HOST", "POMODORO_PORT", "POMODORO_WEB_ROOT", "POMODORO_DB", "POMODORO_CLUSTER", "POMODORO_NODE_ID",
            "POMODORO_JOURNAL_RETENTION_DAYS",
            "POMODORO_JOURNAL_MAX_SESSIONS_PER_ROOM", "POMODORO_ALLOWED_ORIGIN", "POMODORO_TRUSTED_PROXY",
            "POMODORO_METRICS",
            "POMODORO_TLS_CERT", "POMODORO_TLS_KEY", "POMODORO_LOG_LEVEL", "POMODORO_LOG_FORMAT",
            "POMODORO_RECONNECT_GRACE", "POMODORO_EMPTY_ROOM_LIFETIME", "POMODORO_MAX_MEMBERS_PER_ROOM",
            "POMODORO_MAX_NAME_LENGTH", "POMODORO_MAX_TASK_LENGTH", "POMODORO_MIN_FOCUS",
            "POMODORO_MAX_SCHEDULES_PER_ROOM", "POMODORO_MAX_SCHEDULE_NAME_LENGTH", "POMODORO_LATE_START_GRACE",
            "POMODORO_MAX_MESSAGE_BYTES",
            "POMODORO_MESSAGES_PER_SECOND", "POMODORO_MESSAGE_BURST", "POMODORO_MAX_CONNECTIONS_PER_ADDRESS",
            "POMODORO_ROOMS_PER_ADDRESS_PER_MINUTE", "POMODORO_MAX_ROOMS", "POMODORO_MAX_SCHEDULED_ROOMS",
            "POMODORO_MEMBERS_PER_ADDRESS_PER_ROOM", "POMODORO_API_REQUESTS_PER_SECOND", "POMODORO_API_BURST",
            "POMODORO_MAX_QUEUED_FRAMES",
            "POMODORO_MAX_QUEUED_BYTES", "POMODORO_HANDSHAKE_TIMEOUT", "POMODORO_PING_AFTER", "POMODORO_HANG_UP_AFTER",
            "POMODORO_WEBHOOK_ALLOW_PRIVATE", "POMODORO_WEBHOOKS_PER_ROOM", "POMODORO_WEBHOOK_MAX_PAYLOAD_BYTES",
            "POMODORO_WEBHOOK_DELIVERIES_PER_MINUTE", "POMODORO_WEBHOOK_FIRST_RETRY",
        ])
        #expect(ConfigurationResolver.configEnvironmentVariable == "POMODORO_CONFIG")
        for setting in Setting.all { #expect(setting.option == "--" + setting.name) }
    }

    @Test func anEmptyVariableCountsAsUnset() throws {
        let resolved = try resolve(["--config", "c"], environment: ["POMODORO_HOST": "", "POMODORO_PORT": ""],
                                   files: ["c": "host = 0.0.0.0\n"])
        #expect(resolved.settings.host == "0.0.0.0")
        #expect(resolved.settings.port == 8080)
    }

    @Test func theConfigFileComesFromTheOptionOrTheEnvironment() throws {
        let files = ["/a.conf": "port = 1\n", "/b.conf": "port = 2\n"]
        #expect(try resolve(environment: ["POMODORO_CONFIG": "/b.conf"], files: files).settings.port == 2)
        let both = try resolve(["--config", "/a.conf"], environment: ["POMODORO_CONFIG": "/b.conf"], files: files)
        #expect(both.settings.port == 1)
        #expect(both.configFile == "/a.conf")
        #expect(configurationError(["--config", "/missing.conf"])
                    == "cannot read the config file /missing.conf: No such file or directory")
    }

    /// A repeatable setting takes all its values from the first source that has any; sources do not add up.
    @Test func originsComeFromOneSource() throws {
        let file = "allowed-origin = https://a.example\nallowed-origin = https://b.example, https://c.example\n"
        let fromFile = try resolve(["--config", "c"], files: ["c": file])
        #expect(fromFile.settings.allowedOrigins == ["https://a.example", "https://b.example", "https://c.example"])
        let fromEnvironment = try resolve(["--config", "c"],
                                          environment: ["POMODORO_ALLOWED_ORIGIN": "https://d.example,https://e.example"],
                                          files: ["c": file])
        #expect(fromEnvironment.settings.allowedOrigins == ["https://d.example", "https://e.example"])
        let fromOptions = try resolve(["--allowed-origin", "https://f.example", "--allowed-origin", "http://g.example:8080"],
                                      environment: ["POMODORO_ALLOWED_ORIGIN": "https://d.example"])
        #expect(fromOptions.settings.allowedOrigins == ["https://f.example", "http://g.example:8080"])
    }

    @Test func trustedProxiesComeFromOneSourceInTheirCanonicalForm() throws {
        let file = "trusted-proxy = 127.0.0.1\ntrusted-proxy = 10.0.0.0/8, ::1\n"
        let fromFile = try resolve(["--config", "c"], files: ["c": file])
        #expect(fromFile.settings.trustedProxies.map(\.description) == ["127.0.0.1/32", "10.0.0.0/8", "::1/128"])
        let fromEnvironment = try resolve(["--config", "c"],
                                          environment: ["POMODORO_TRUSTED_PROXY": "172.16.0.0/12,fd00::/8"],
                                          files: ["c": file])
        #expect(fromEnvironment.settings.trustedProxies.map(\.description) == ["172.16.0.0/12", "fd00::/8"])
        let fromOptions = try resolve(["--trusted-proxy", "192.168.1.10", "--trusted-proxy", "0:0::1/128"],
                                      environment: ["POMODORO_TRUSTED_PROXY": "172.16.0.0/12"])
        #expect(fromOptions.settings.trustedProxies.map(\.description) == ["192.168.1.10/32", "::1/128"])
        #expect(Setting.named("trusted-proxy")?.value(in: fromOptions.settings) == "192.168.1.10/32, ::1/128")
        let trusted = fromOptions.settings.serverConfiguration.trustedProxies
        #expect(trusted.trusts(IPAddress("192.168.1.10")!) && !trusted.trusts(IPAddress("192.168.1.11")!))
        #expect(try resolve().settings.serverConfiguration.trustedProxies == .none, "no proxy is trusted by default")
    }

    @Test func unknownPomodoroVariablesAreWarnedAboutNotFatal() throws {
        let resolved = try resolve(environment: ["POMODORO_PROT": "1", "POMODORO_CONFIG": "", "POMO_SERVER": "x",
                                                 "PORT": "1"])
        #expect(resolved.warnings == ["POMODORO_PROT is not a setting (did you mean POMODORO_PORT?); it is ignored"])
        #expect(resolved.settings.port == 8080)
    }

    @Test func theEffectiveConfigurationBuildsTheServers() throws {
        let resolved = try resolve(["--host", "127.0.0.1", "--port", "0", "--web-root", "/w", "--reconnect-grace", "5",
                                    "--empty-room-lifetime", "6", "--max-members-per-room", "7", "--max-name-length", "8",
                                    "--max-task-length", "9", "--max-rooms", "10", "--ping-after", "11",
                                    "--hang-up-after", "12", "--tls-cert", "c.pem", "--tls-key", "k.pem",
                                    "--allowed-origin", "https://x.example", "--metrics", "off", "--min-focus", "13",
                                    "--journal-retention-days", "14", "--journal-max-sessions-per-room", "15",
                                    "--max-schedules-per-room", "16", "--max-schedule-name-length", "17",
                                    "--late-start-grace", "18"])
        let configuration = resolved.settings.serverConfiguration
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 0)
        #expect(configuration.webRoot == "/w")
        #expect(configuration.roomPolicy.reconnectGrace == .seconds(5))
        #expect(configuration.roomPolicy.emptyRoomLifetime == .seconds(6))
        #expect(configuration.roomPolicy.maxMembers == 7)
        #expect(configuration.roomPolicy.maxNameLength == 8)
        #expect(configuration.roomPolicy.maxTaskLength == 9)
        #expect(configuration.limits.maxRooms == 10)
        #expect(configuration.limits.pingAfterSeconds == 11)
        #expect(configuration.limits.hangUpAfterSeconds == 12)
        #expect(configuration.tlsCertificatePath == "c.pem")
        #expect(configuration.tlsPrivateKeyPath == "k.pem")
        #expect(configuration.allowedOrigins == ["https://x.example"])
        #expect(!configuration.metricsEnabled)
        #expect(configuration.roomPolicy.minFocusSeconds == 13)
        #expect(configuration.journalRetention == JournalRetention(maxAgeDays: 14, maxRowsPerRoom: 15))
        #expect(configuration.schedulePolicy.maxSchedules == 16)
        #expect(configuration.schedulePolicy.maxNameLength == 17)
        #expect(configuration.schedulePolicy.lateStartGrace == 18)
        let defaults = try resolve().settings.serverConfiguration
        #expect(defaults.metricsEnabled, "on by default")
        #expect(defaults.roomPolicy.minFocusSeconds == 60)
        #expect(defaults.schedulePolicy.maxSchedules == 20 && defaults.schedulePolicy.maxNameLength == 60)
        #expect(defaults.schedulePolicy.lateStartGrace == 300, "five minutes")
        #expect(defaults.journalRetention == JournalRetention(maxAgeDays: nil, maxRowsPerRoom: 100_000), "kept for ever, capped")
        let unbounded = try resolve(["--journal-retention-days", "0", "--journal-max-sessions-per-room", "0"])
        #expect(unbounded.settings.serverConfiguration.journalRetention == .keepEverything)
    }

    @Test func theDefaultWebRootIsTheCheckoutsElseTheInstalledOne() {
        let installed = "/usr/local/share/pomodoro/web"
        #expect(ServerSettings.defaultWebRoot(executablePath: "/usr/local/bin/pomodoro-server",
                                              isDirectory: { $0 == "web" || $0 == installed }) == "web")
        #expect(ServerSettings.defaultWebRoot(executablePath: "/usr/local/bin/pomodoro-server",
                                              isDirectory: { $0 == installed }) == installed)
        #expect(ServerSettings.defaultWebRoot(executablePath: "/opt/p/bin/pomodoro-server",
                                              isDirectory: { $0 == "/opt/p/share/pomodoro/web" })
                == "/opt/p/share/pomodoro/web")
        #expect(ServerSettings.defaultWebRoot(executablePath: "/usr/local/bin/pomodoro-server",
                                              isDirectory: { _ in false }) == "web")
    }
}
