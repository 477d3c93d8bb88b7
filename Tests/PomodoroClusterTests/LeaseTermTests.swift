import PomodoroCluster
import PomodoroCore
import Testing

@Suite struct LeaseTermTests {
    let start = Instant(nanoseconds: 5_000_000_000)

    @Test func aTermEndsBeforeTheLeaseCanExpireInRedis() {
        let term = LeaseTerm(epoch: 3, requestedAt: start)
        #expect(term.epoch == 3)
        #expect(term.isValid(at: start + .milliseconds(1_300)))
        #expect(!term.isValid(at: start + .milliseconds(1_350)))
        // Redis counts the time to live from when the request arrived, never before it was sent.
        #expect(term.validUntil < start + LeaseTerm.timeToLive)
    }

    @Test func aRenewalCountsFromWhenItWasSent() {
        var term = LeaseTerm(epoch: 1, requestedAt: start)
        term.renewed(requestedAt: start + .milliseconds(500), answeredAt: start + .milliseconds(900))
        #expect(term.validUntil == start + .milliseconds(500) + LeaseTerm.timeToLive - LeaseTerm.margin)
        #expect(term.isValid(at: start + .milliseconds(1_800)))
        #expect(!term.isValid(at: start + .milliseconds(1_850)))
    }

    @Test func aRenewalAnsweredAfterTheTermEndedDoesNotRevive() {
        // Stopped (SIGSTOP) between sending a renewal and reading its answer, past the end of the term.
        var term = LeaseTerm(epoch: 1, requestedAt: start)
        term.renewed(requestedAt: start + .milliseconds(1_000), answeredAt: start + .seconds(5))
        #expect(!term.isValid(at: start + .seconds(5)))
        #expect(term.validUntil == start + LeaseTerm.timeToLive - LeaseTerm.margin)
    }

    @Test func anOlderRenewalNeverShortensTheTerm() {
        var term = LeaseTerm(epoch: 1, requestedAt: start + .milliseconds(500))
        term.renewed(requestedAt: start, answeredAt: start + .milliseconds(600))
        #expect(term.validUntil == start + .milliseconds(500) + LeaseTerm.timeToLive - LeaseTerm.margin)
    }

    @Test func aTermThatMustWaitIsNotValidBeforeItsStart() {
        var term = LeaseTerm(epoch: 2, requestedAt: start, validFrom: start + LeaseTerm.timeToLive)
        #expect(!term.isValid(at: start))
        #expect(!term.hasEnded(at: start))
        // Renewed meanwhile, it begins at its start and runs on.
        term.renewed(requestedAt: start + .milliseconds(1_000), answeredAt: start + .milliseconds(1_010))
        #expect(term.isValid(at: start + LeaseTerm.timeToLive))
        #expect(term.isValid(at: start + .milliseconds(2_300)))
    }

    @Test func renewalsLeaveThreeTriesBeforeTheLeaseLapses() {
        #expect(LeaseTerm.nextRenewal(after: start) == start + .milliseconds(500))
        #expect(LeaseTerm.renewalInterval * 3 == LeaseTerm.timeToLive)
    }
}
