import PomodoroCore
import PomodoroNet

// Passcode work: slow hashes off the service thread, in the turn each address gets at the passcode gate and
// with the place the wrong-passcode limit gives it, and a lock hashed anew with the current work factor put
// in place of an older one.

extension RoomHub {
    /// How long checks wait before asking again when their address's limit was full of checks running on
    /// other nodes only (none of this node's will end to wake them).
    static let passcodeRetryNanoseconds: Int64 = 200_000_000

    /// Runs `start` (a passcode check) once `address`'s gate lets it and the wrong-passcode limit gives it a
    /// place, or `refuse` if either will not; either may run now or later, on the service thread. A started
    /// check must end with `passcodeChecked`.
    func whenPasscodeMayBeChecked(from address: String, start: @escaping () -> Void, refuse: @escaping () -> Void) {
        switch passcodeGate.request(from: address) {
        case .start(let ticket):
            passcodeWaiters[ticket] = (start, refuse)
            askForPlace(ticket, from: address)
        case .wait(let ticket):
            passcodeWaiters[ticket] = (start, refuse)
        case .refuse:
            refuse()
        }
    }

    /// A started ticket asks the limit for its place: granted, it runs; limited, it and every check of the
    /// address still waiting are refused; full, it waits again at the head of the line.
    private func askForPlace(_ ticket: PasscodeGate.Ticket, from address: String) {
        addressLimits.reservePasscodeCheck(for: address) { [self] admission in
            switch admission {
            case .granted(let place):
                passcodePlaces[address, default: []].append(place)
                passcodeWaiters.removeValue(forKey: ticket)?.start()
            case .limited:
                let refused = [ticket] + passcodeGate.refuseWaiting(from: address)
                for next in passcodeGate.finish(from: address) { askForPlace(next, from: address) }
                for each in refused { passcodeWaiters.removeValue(forKey: each)?.refuse() }
            case .full:
                passcodeGate.requeue(ticket, from: address)
                if passcodeGate.running(from: address) == 0 { retryLater(address) }
            }
        }
    }

    /// Asks again, shortly, for the checks of `address` that found its limit full of other servers' checks.
    private func retryLater(_ address: String) {
        passcodeRetrying.insert(address)
        if passcodeRetry == nil {
            passcodeRetry = transport.timer { [weak self] in self?.retryWaitingChecks() }
        }
        passcodeRetry?.schedule(afterNanoseconds: Self.passcodeRetryNanoseconds)
    }

    private func retryWaitingChecks() {
        let addresses = passcodeRetrying
        passcodeRetrying.removeAll()
        for address in addresses {
            for ticket in passcodeGate.startWaiting(from: address) { askForPlace(ticket, from: address) }
        }
    }

    /// A passcode check of `address` is over: a wrong one counts for a minute, a right one hands its place
    /// back, and the checks waiting behind it take their turn.
    func passcodeChecked(from address: String, wrong: Bool) {
        if wrong { logger.notice("wrong passcode", metadata: ["peer": "\(address)"]) }
        if var places = passcodePlaces[address], !places.isEmpty {
            let place = places.removeFirst()
            passcodePlaces[address] = places.isEmpty ? nil : places
            addressLimits.settlePasscodeCheck(place, wrong: wrong)
        }
        for ticket in passcodeGate.finish(from: address) { askForPlace(ticket, from: address) }
    }

    /// Runs a passcode hash in the background in the turn `address` gets at the passcode gate; `done` has
    /// the result on the service thread, after the gate has counted it. Refused by the gate, `refused` runs
    /// instead. Either may run now or later.
    func hashPasscode<T: Sendable>(from address: String, _ work: @escaping @Sendable () -> T,
                                   isWrong: @escaping (T) -> Bool, done: @escaping (T) -> Void,
                                   refused: @escaping () -> Void) {
        let finish = LoopBound({ [self] (result: T) in
            passcodeChecked(from: address, wrong: isWrong(result))
            done(result)
        }, loop: transport.loop)
        let transport = transport
        whenPasscodeMayBeChecked(from: address, start: { [hashing] in
            hashing.run {
                let result = work()
                transport.post { finish.value(result) }
            }
        }, refuse: refused)
    }

    /// Puts a passcode hashed anew with the current work factor in place of the one it was checked against,
    /// unless the room has gone or changed lock meanwhile. The store gets it with the room's next saved row.
    func adopt(_ upgraded: PasscodeVerifier, replacing old: PasscodeVerifier, in id: RoomID) {
        guard let entry = rooms[id], entry.passcode?.encoded == old.encoded else { return }
        entry.passcode = upgraded
        lockRehashed(in: entry, from: old.encoded, to: upgraded.encoded)
        logger.info("room's passcode hash upgraded to the current work factor", metadata: ["room": "\(id)"])
    }
}
