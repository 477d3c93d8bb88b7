import Foundation

/// How long the live tests wait for something to happen: bounds, never timings. Under a sanitizer every
/// instruction costs several times more, so `make test-sanitize` stretches every bound by the same factor
/// (`TEST_TIME_SCALE`, at least 1; not named `POMODORO_…`, which the server would take for a setting of its
/// own in the processes the tests start); a normal run waits as written.
public enum TestTime {
    public static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["TEST_TIME_SCALE"],
              let value = Double(text), value.isFinite else { return 1 }
        return max(1, value)
    }()

    /// Whether this run is under a sanitizer (`make test-sanitize` stretches the bounds): its shadow memory
    /// then counts in the process's resident set.
    public static var underSanitizer: Bool { scale > 1 }

    /// The moment `seconds` (stretched) from now.
    public static func deadline(_ seconds: Double) -> Date { Date().addingTimeInterval(seconds * scale) }

    /// A socket's receive timeout in whole seconds, stretched.
    public static func seconds(_ seconds: Int) -> Int { Int((Double(seconds) * scale).rounded(.up)) }

    /// A test's time limit in whole minutes, stretched.
    public static func minutes(_ minutes: Int) -> Int { Int((Double(minutes) * scale).rounded(.up)) }

    /// Waits until `condition` holds, checking every 50 ms, `seconds` (stretched) at most; false if it never did.
    public static func waitUntil(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = deadline(seconds)
        while Date() < end {
            if try condition() { return true }
            usleep(50_000)
        }
        return false
    }
}
