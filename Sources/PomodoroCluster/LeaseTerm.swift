import PomodoroCore

/// What a node knows of its own lease on one room, on its own monotonic clock: the epoch Redis gave it and
/// until when it may act as the room's owner.
///
/// Redis starts a lease's expiry when a request *arrives*, which is never before this node *sent* it; so a
/// term counted from the moment of sending ends before the key in Redis can expire, and no other node can
/// take the room while this one still believes it holds it. `margin` covers the two clocks running at
/// slightly different rates and Redis's millisecond rounding.
///
/// A node checks `isValid(at:)` before every tick, broadcast and write as the owner. A node that was
/// stopped (`SIGSTOP`, a long pause) finds its term over when it runs again and stops owning at once,
/// whatever Redis says later; the store's fence turns away anything it had already sent on its way.
public struct LeaseTerm: Equatable, Sendable {
    /// How long Redis keeps a lease that is not renewed.
    public static let timeToLive = Duration.milliseconds(1_500)
    /// How often the owner renews: three tries before the lease can lapse.
    public static let renewalInterval = Duration.milliseconds(500)
    /// Taken off the end of each term (see above).
    public static let margin = Duration.milliseconds(150)

    /// The room's owner count when this node took it: higher than every owner's before.
    public let epoch: Int64
    /// This node may act as owner from this instant on (later than the grant when the node must first
    /// wait out an earlier owner's term: see `RoomTakeover`).
    public let validFrom: Instant
    /// This node may act as owner strictly before this instant.
    public private(set) var validUntil: Instant

    /// The term of a lease granted by a request sent at `requestedAt`, to be acted on from `validFrom`
    /// (by default at once).
    public init(epoch: Int64, requestedAt: Instant, validFrom: Instant? = nil) {
        self.epoch = epoch
        self.validFrom = validFrom ?? requestedAt
        validUntil = requestedAt + Self.timeToLive - Self.margin
    }

    /// Redis renewed the lease on a request sent at `requestedAt`: the term runs `timeToLive` from then.
    /// An answer that arrives after the term ended does not bring it back: another node may have taken the
    /// room meanwhile and seen nothing of this one.
    public mutating func renewed(requestedAt: Instant, answeredAt: Instant) {
        guard !hasEnded(at: answeredAt) else { return }
        validUntil = max(validUntil, requestedAt + Self.timeToLive - Self.margin)
    }

    /// Whether this node may still tick, broadcast and write for the room.
    public func isValid(at now: Instant) -> Bool { validFrom <= now && now < validUntil }

    /// Whether the term has ended for good (as opposed to not having begun yet).
    public func hasEnded(at now: Instant) -> Bool { now >= validUntil }

    /// When the next renewal should be sent, given when the last one was.
    public static func nextRenewal(after lastRequest: Instant) -> Instant { lastRequest + renewalInterval }
}
