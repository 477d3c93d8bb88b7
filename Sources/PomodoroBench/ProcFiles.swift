/// Readings of another process from Linux's `/proc`, parsed from the files' text (reading the files is
/// the executable's job), so the parsing is tested on fixed text.
public enum ProcFiles {
    /// CPU time a process has used, in clock ticks (`sysconf(_SC_CLK_TCK)`, 100 a second on Linux).
    public struct CPUTime: Equatable, Sendable {
        public var userTicks: Int64
        public var systemTicks: Int64
        public var totalTicks: Int64 { userTicks + systemTicks }
        public init(userTicks: Int64, systemTicks: Int64) {
            self.userTicks = userTicks
            self.systemTicks = systemTicks
        }
    }

    /// `utime` and `stime` (fields 14 and 15) of `/proc/PID/stat`.
    ///
    /// Field 2 is the command name in parentheses and may itself hold spaces and parentheses, so fields are
    /// counted from the last `)`: the field after it is field 3.
    public static func cpuTime(fromStat text: String) -> CPUTime? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(whereSeparator: { $0 == " " || $0 == "\n" })
        // fields[0] is field 3 (state), so field n is fields[n - 3].
        guard fields.count > 12, let user = Int64(fields[14 - 3]), let system = Int64(fields[15 - 3]) else {
            return nil
        }
        return CPUTime(userTicks: user, systemTicks: system)
    }

    /// The resident set size in KiB: the `VmRSS:` line of `/proc/PID/status` ("VmRSS:	  12345 kB").
    public static func residentKiB(fromStatus text: String) -> Int64? {
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let parts = line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count == 2, parts[1] == "kB", let value = Int64(parts[0]) else { return nil }
            return value
        }
        return nil
    }

    /// Time all CPUs of the machine spent, in clock ticks: busy (anything but idle and waiting for I/O)
    /// and in total, with the number of CPUs. On a shared machine this says how much of the machine
    /// others were using while a figure was measured.
    public struct MachineCPU: Equatable, Sendable {
        public var busyTicks: Int64
        public var totalTicks: Int64
        public var cpus: Int
        public init(busyTicks: Int64, totalTicks: Int64, cpus: Int) {
            self.busyTicks = busyTicks
            self.totalTicks = totalTicks
            self.cpus = cpus
        }
    }

    /// The `cpu` line of `/proc/stat` ("cpu  user nice system idle iowait irq softirq steal ..."), and the
    /// number of `cpuN` lines.
    public static func machineCPU(fromStat text: String) -> MachineCPU? {
        var summary: MachineCPU?
        var cpus = 0
        for line in text.split(separator: "\n") where line.hasPrefix("cpu") {
            let fields = line.split(separator: " ")
            if fields[0] == "cpu" {
                let values = fields.dropFirst().prefix(8).compactMap { Int64($0) }
                guard values.count >= 5 else { return nil }
                let total = values.reduce(0, +)
                summary = MachineCPU(busyTicks: total - values[3] - values[4], totalTicks: total, cpus: 0)
            } else if fields[0].dropFirst(3).allSatisfy(\.isNumber) {
                cpus += 1
            }
        }
        summary?.cpus = cpus
        return summary
    }
}
