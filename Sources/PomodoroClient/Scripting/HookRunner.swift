import Foundation

/// Runs `pomo join`'s local hooks: each command through `/bin/sh -c`, as a child process that nobody waits
/// for on the screen's loop, with the phase change in its environment and its output appended to a log.
///
/// Bounded: a hook runs at most once at a time. A change that comes while it still runs waits, and only the
/// latest one waits: three quick changes during a slow hook run it twice (now and for the last change),
/// never three times stacked. The log starts again (the old one kept as `hooks.log.1`) past `logLimit`.
/// An actor: a change fired and a hook's end (told on the process's own thread) take their turns.
public actor HookRunner {
    public let commands: [String]
    public let logPath: String?
    public let logLimit: Int

    /// Per command: whether it runs, and the change that waits for it.
    private var running: [Bool]
    private var waiting: [PhaseChange?]
    private let inherited: [String: String]

    public init(commands: [String], logPath: String?, logLimit: Int = 1 << 20,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.commands = commands
        self.logPath = logPath
        self.logLimit = logLimit
        running = Array(repeating: false, count: commands.count)
        waiting = Array(repeating: nil, count: commands.count)
        inherited = environment
    }

    /// Where the log goes: `hooks.log` in pomo's state folder (beside preferences.json).
    public static func logPath(environment: [String: String]) -> String? {
        StateFile.directory(environment: environment).map { $0 + "/hooks.log" }
    }

    /// Starts every hook for `change` (or queues it behind a run still going); returns at once.
    public func fire(_ change: PhaseChange) {
        for index in commands.indices {
            if running[index] {
                let replaced = waiting[index] != nil
                waiting[index] = change
                log("\(stamp()) hook still running, \(replaced ? "replacing the waiting change with" : "waiting:") "
                    + "\(change.phase.rawValue) \(change.status.rawValue): \(commands[index])\n")
                continue
            }
            running[index] = true
            start(index, change)
        }
    }

    private func start(_ index: Int, _ change: PhaseChange) {
        let command = commands[index]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = inherited.merging(change.environment) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        let output = openLog()
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = output ?? FileHandle.nullDevice
        let started = Date()
        process.terminationHandler = { [weak self] finished in
            guard let self else { return }
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            let how = finished.terminationReason == .exit ? "exit \(finished.terminationStatus)"
                : "killed by signal \(finished.terminationStatus)"
            self.log("\(self.stamp()) \(how) after \(seconds) s: \(command)\n")
            Task { await self.finished(index) }
        }
        log("\(stamp()) \(change.room) \(change.phase.rawValue) \(change.status.rawValue): \(command)\n")
        do {
            try process.run()
        } catch {
            log("\(stamp()) cannot run /bin/sh: \(error)\n")
            finished(index)
        }
        try? output?.close()
    }

    private func finished(_ index: Int) {
        guard let next = waiting[index] else {
            running[index] = false
            return
        }
        waiting[index] = nil
        start(index, next)
    }

    /// Whether any hook runs or waits (for tests and for a tidy exit).
    public var isIdle: Bool { !running.contains(true) }

    nonisolated private func stamp() -> String { PhaseChange.iso8601(Int64(Date().timeIntervalSince1970 * 1000)) }

    /// The log, opened for appending (a fresh descriptor per run: the child keeps its own copy).
    nonisolated private func openLog() -> FileHandle? {
        guard let logPath else { return nil }
        let directory = (logPath as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        var info = stat()
        if stat(logPath, &info) == 0, Int(info.st_size) > logLimit { rename(logPath, logPath + ".1") }
        let fd = open(logPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        return fd >= 0 ? FileHandle(fileDescriptor: fd, closeOnDealloc: true) : nil
    }

    nonisolated private func log(_ line: String) {
        guard let handle = openLog() else { return }
        handle.write(Data(line.utf8))
        try? handle.close()
    }
}
