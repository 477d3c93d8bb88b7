import Foundation
import PomodoroBench
import Testing

/// `/proc/PID/stat` and `/proc/PID/status` as Linux writes them.
@Suite struct ProcFilesTests {
    /// A real line from `/proc/PID/stat` of the server (fields 14 and 15 are 1234 and 567).
    static let stat = "4242 (pomodoro-server) S 1 4242 4242 0 -1 4194560 2301 0 0 0 1234 567 0 0 20 0 3 0 "
        + "8839155 1202843648 6164 18446744073709551615 1 1 0 0 0 0 0 4096 16387 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

    @Test func userAndSystemTicksAreFields14And15() throws {
        let cpu = try #require(ProcFiles.cpuTime(fromStat: Self.stat))
        #expect(cpu.userTicks == 1234)
        #expect(cpu.systemTicks == 567)
        #expect(cpu.totalTicks == 1801)
    }

    @Test func aCommandNameWithSpacesAndParenthesesDoesNotShiftTheFields() throws {
        let odd = Self.stat.replacingOccurrences(of: "(pomodoro-server)", with: "(a) b (c) d)")
        let cpu = try #require(ProcFiles.cpuTime(fromStat: odd))
        #expect(cpu == ProcFiles.CPUTime(userTicks: 1234, systemTicks: 567))
    }

    @Test func truncatedOrGarbledStatIsNil() {
        #expect(ProcFiles.cpuTime(fromStat: "") == nil)
        #expect(ProcFiles.cpuTime(fromStat: "4242 (x) S 1 4242") == nil)
        #expect(ProcFiles.cpuTime(fromStat: "4242 x S 1 2 3 4 5 6 7 8 9 10 11 12") == nil)
        #expect(ProcFiles.cpuTime(fromStat: "4242 (x) S 1 4242 4242 0 -1 4194560 2301 0 0 0 x 567 0") == nil)
    }

    static let status = """
        Name:\tpomodoro-server
        Umask:\t0022
        State:\tS (sleeping)
        Tgid:\t4242
        VmPeak:\t 1234567 kB
        VmSize:\t 1174652 kB
        VmHWM:\t   30000 kB
        VmRSS:\t   24656 kB
        RssAnon:\t   12000 kB
        Threads:\t3

        """

    @Test func residentMemoryIsTheVmRSSLineInKiB() {
        #expect(ProcFiles.residentKiB(fromStatus: Self.status) == 24656)
    }

    @Test func statusWithoutVmRSSIsNil() {
        // A kernel thread, or a process that has just exited, has no VmRSS line.
        #expect(ProcFiles.residentKiB(fromStatus: "Name:\tkthreadd\nState:\tS (sleeping)\n") == nil)
        #expect(ProcFiles.residentKiB(fromStatus: "VmRSS:\t 12 MB\n") == nil)
    }
}

/// `/proc/stat`: how busy the whole machine was.
@Suite struct MachineCPUTests {
    static let stat = """
        cpu  10132153 290696 3084719 46828483 16683 0 25195 0 0 0
        cpu0 1393280 32966 572056 13343292 6080 0 17875 0 0 0
        cpu1 1335467 31232 535838 13362312 5400 0 3214 0 0 0
        intr 1462898 0 0 0
        ctxt 3049282
        btime 1767225600
        processes 99000

        """

    @Test func busyIsEverythingButIdleAndIOWait() throws {
        let cpu = try #require(ProcFiles.machineCPU(fromStat: Self.stat))
        let total: Int64 = 10132153 + 290696 + 3084719 + 46828483 + 16683 + 25195
        #expect(cpu.totalTicks == total)
        #expect(cpu.busyTicks == total - 46828483 - 16683)
        #expect(cpu.cpus == 2)
    }

    @Test func aStatWithoutTheCPULineIsNil() {
        #expect(ProcFiles.machineCPU(fromStat: "intr 1 2 3\n") == nil)
        #expect(ProcFiles.machineCPU(fromStat: "cpu  1 2\n") == nil)
    }
}
