/// Where the server's wall clock stands relative to this machine's monotonic clock.
///
/// Every server message carries `serverTime`, read when it was sent. `serverTime - receivedAt` is the true
/// offset minus the message's travel time, so each sample underestimates the offset: the largest sample
/// seen is the best estimate (the fastest message). Keeping the largest also means the estimated server
/// time never runs backwards, so a countdown computed from it never jumps up between ticks.
///
/// A sample far below the estimate (more than `stepToleranceMs`) means a clock was stepped, not that a
/// message was slow: the estimate then starts again from that sample.
public struct ServerClockEstimate: Equatable, Sendable {
    /// Server wall-clock ms minus local monotonic ms; nil before the first message.
    public private(set) var offsetMs: Int64?
    /// How far below the estimate a sample may fall before it counts as a clock step.
    public var stepToleranceMs: Int64

    public init(stepToleranceMs: Int64 = 1000) {
        self.stepToleranceMs = stepToleranceMs
    }

    /// Takes one message's `serverTime` and the local moment it arrived.
    public mutating func sample(serverTime: Int64, receivedAt: LocalInstant) {
        let candidate = serverTime - receivedAt.monotonicMs
        guard let current = offsetMs else {
            offsetMs = candidate
            return
        }
        if candidate > current || candidate < current - stepToleranceMs {
            offsetMs = candidate
        }
    }

    /// The server's wall clock at a local moment (the local wall clock before any sample).
    public func serverTime(at local: LocalInstant) -> Int64 {
        guard let offsetMs else { return local.wallMs }
        return local.monotonicMs + offsetMs
    }
}
