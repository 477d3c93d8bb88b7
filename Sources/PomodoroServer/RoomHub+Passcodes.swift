import PomodoroCore
import PomodoroNet

// Passcode work: slow hashes off the service thread, in the turn each address gets at the passcode gate,
// and a lock hashed anew with the current work factor put in place of an older one.

extension RoomHub {
    /// Runs `start` (a passcode check) once `address`'s gate lets it, or `refuse` if it will not; either may
    /// run now or later, on the service thread. A started check must end with `passcodeChecked`.
    func whenPasscodeMayBeChecked(from address: String, start: @escaping () -> Void, refuse: @escaping () -> Void) {
        switch passcodeGate.request(from: address, at: clock.now().monotonic) {
        case .start: start()
        case .wait(let ticket): passcodeWaiters[ticket] = (start, refuse)
        case .refuse: refuse()
        }
    }

    /// A passcode check of `address` is over: it counts if it was wrong, and the checks waiting behind it
    /// start or are refused.
    func passcodeChecked(from address: String, wrong: Bool) {
        if wrong { logger.notice("wrong passcode", metadata: ["peer": "\(address)"]) }
        let next = passcodeGate.finish(from: address, wrong: wrong, at: clock.now().monotonic)
        for ticket in next.refuse { passcodeWaiters.removeValue(forKey: ticket)?.refuse() }
        for ticket in next.start { passcodeWaiters.removeValue(forKey: ticket)?.start() }
    }

    /// Runs a passcode hash in the background in the turn `address` gets at the passcode gate; `done` has
    /// the result on the service thread, after the gate has counted it. Refused by the gate, `refused` runs
    /// instead. Either may run now or later.
    func hashPasscode<T: Sendable>(from address: String, _ work: @escaping @Sendable () -> T,
                                   isWrong: @escaping (T) -> Bool, done: @escaping (T) -> Void,
                                   refused: @escaping () -> Void) {
        let finish = UncheckedBox({ [self] (result: T) in
            passcodeChecked(from: address, wrong: isWrong(result))
            done(result)
        })
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
