import Dispatch
import Foundation
import PomodoroNet
import PomodoroStore
import Testing

/// A thread of ours names itself as the system shows it, whoever started it: the name `ps -L`, `top -H` and a
/// debugger show is how an admin tells the hashing, fan-out and lease threads from dispatch's.
struct ThreadNameTests {
    @Test func threadsStartedFromDispatchThreadsKeepTheNamesTheyGiveThemselves() {
        // Foundation's `Thread.current.name`, set the same way, left about one such thread in thirty with its
        // maker's name: of 200, some would be wrong.
        let seen = LockedState<[(given: String, shown: String?)]>([])
        let group = DispatchGroup()
        for index in 0..<200 {
            group.enter()
            DispatchQueue.global().async {
                Thread {
                    // Every tenth one longer than the system keeps: cut to its first 15 bytes.
                    let given = index % 10 == 0 ? "pomodoro-thread-\(index)" : "named-\(index)"
                    ThreadName.set(given)
                    let shown = ThreadName.current
                    seen.withLock { $0.append((given, shown)) }
                    group.leave()
                }.start()
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let names = seen.withLock { $0 }
        #expect(names.count == 200)
        let wrong = names.filter { $0.shown != String(decoding: $0.given.utf8.prefix(15), as: UTF8.self) }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        #expect(names.contains { $0.shown == "pomodoro-thread" })
    }
}
