import Foundation
import Glibc
import PomodoroTestSupport
import Testing

/// The one launcher every test target starts programs with: what it hands the child, what it reads back,
/// and that a child that does not end is ended.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct ProcessLauncherTests {
    @Test func outputErrorsAndTheExitStatusComeBackApart() throws {
        let result = try ProcessLauncher.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(result.status == 3 && result.exited)
        #expect(result.output == "out\n" && result.errors == "err\n")
    }

    @Test func theChildGetsExactlyTheEnvironmentAndDirectoryItIsGiven() throws {
        let result = try ProcessLauncher.run("/usr/bin/env", environment: ["ONLY": "this one"])
        #expect(result.output == "ONLY=this one\n")
        let folder = FileManager.default.temporaryDirectory.resolvingSymlinksInPath().path
        #expect(try ProcessLauncher.run("/bin/pwd", directory: folder).output == folder + "\n")
    }

    @Test func theChildInheritsNoDescriptorButTheStandardThree() throws {
        // Opened without close-on-exec: a plain fork and exec would hand it on.
        let held = open("/dev/null", O_RDONLY)
        try #require(held > 2)
        defer { close(held) }
        let result = try ProcessLauncher.run("/bin/sh", ["-c", "test -e /proc/$$/fd/\(held) && echo inherited || echo closed"])
        #expect(result.output == "closed\n")
    }

    @Test func linesAreReadAsTheyComeAndTheEndIsAnError() throws {
        let child = try ProcessLauncher.start("/bin/sh", ["-c", "echo one; echo two"])
        #expect(try child.nextLine() == "one")
        #expect(try child.nextLine() == "two")
        #expect(throws: LaunchFailure.self) { try child.nextLine(timeout: 5) }
    }

    @Test func aChildThatOutlivesTheTimeoutIsKilledAndReported() throws {
        let child = try ProcessLauncher.start("/bin/sleep", ["60"])
        #expect(throws: LaunchFailure.self) { try child.wait(timeout: 0.2) }
        #expect(!child.isRunning)
        // Killed by SIGKILL: 128 + 9, as a shell reports it.
        let ended = try child.wait(timeout: 5)
        #expect(ended.status == 137 && !ended.exited)
    }

    @Test func stopEndsAChildGentlyFirst() throws {
        let child = try ProcessLauncher.start("/bin/sh", ["-c", "trap 'exit 0' TERM; echo ready; while :; do sleep 1; done"])
        #expect(try child.nextLine() == "ready")
        let ended = try #require(child.stop())
        #expect(ended.status == 0 && ended.exited)
    }

    @Test func suspendReturnsOnceEveryThreadHasStoppedAndResumeLetsItGoOn() throws {
        let child = try ProcessLauncher.start("/bin/sh", ["-c", "trap 'echo term; exit 0' TERM; echo ready; while :; do sleep 0.05; done"])
        #expect(try child.nextLine() == "ready")
        #expect(child.suspend())
        let folder = "/proc/\(child.pid)/task"
        for thread in try FileManager.default.contentsOfDirectory(atPath: folder) {
            let stat = try String(contentsOfFile: "\(folder)/\(thread)/stat", encoding: .utf8)
            #expect(stat.split(separator: ")").last?.first(where: { $0 != " " }) == "T", "\(stat)")
        }
        // A stopped child keeps a SIGTERM pending; going on again, it takes it.
        child.terminate()
        child.resume()
        #expect(try child.nextLine() == "term")
        let ended = try child.wait(timeout: 5)
        #expect(ended.status == 0 && ended.exited)
    }
}
