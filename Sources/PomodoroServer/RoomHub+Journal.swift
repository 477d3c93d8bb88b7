import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// Reading a room's journal for the WebSocket's `stats` and the HTTP API alike: who may read it
// (`RoomAccess`: members, or whoever knows a locked room's passcode, checked off the service thread behind the
// passcode gate, judged again when the answer is delivered), and the read itself, off the service thread.

extension RoomHub {
    enum JournalAnswer<T: Sendable>: Sendable {
        /// The query's answer; `opened`, the lock the reader's passcode opened in the read (nil when none was
        /// needed); `upgraded` when that lock was hashed anew with the current work factor (see `adopt`).
        case answer(T, opened: String?, upgraded: (old: PasscodeVerifier, new: PasscodeVerifier)?)
        case locked
        case wrongPasscode
    }

    /// Where a read finds the room's lock: the room in memory as it is when the read starts (its lock, and
    /// whether the reader is one of its members), or the store.
    private enum LockSource: Sendable {
        case memory(PasscodeVerifier?, isMember: Bool)
        case stored
    }

    /// Reads a room's journal off the service thread for `visitor` at `address`, behind `RoomAccess`'s rule:
    /// a locked room's passcode is checked in the read, in the address's turn at the passcode gate, against
    /// the lock the room has when the read starts (the room in memory's, else the stored one), and a wrong one
    /// counts against the address as for joins; then `query` runs. The answer is judged again on the service
    /// thread against the lock the room has when it is delivered: if the lock changed meanwhile, the request
    /// is made again from the start (a passcode is checked against the new lock). `done` runs on the service
    /// thread; `lockedHint` says how this reader proves access to a locked room.
    func readJournal<T: Sendable>(_ id: RoomID, _ visitor: RoomAccess.Visitor, address: String, lockedHint: String,
                                  query: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                                  done: @escaping (Result<T, Refusal>) -> Void) {
        guard let store else {
            return done(.failure(Refusal(code: .unavailable,
                                         message: "this server runs without a database and keeps no stats")))
        }
        // A check takes a turn at the gate: when the room in memory needs one now, or when only the store knows
        // the room's lock and a passcode was shown.
        let takesTurn: Bool
        if let entry = rooms[id] {
            switch RoomAccess.verdict(lock: entry.passcode, isMember: member(of: entry, visitor) != nil, opened: nil,
                                      passcode: visitor.passcode) {
            case .allowed: takesTurn = false
            case .refused: return done(.failure(Self.locked(lockedHint)))
            case .check: takesTurn = true
            }
        } else {
            takesTurn = visitor.passcode != nil
        }
        let settle = { [self] (result: Result<JournalAnswer<T>, StoreError>, wait: RoomAccess.Wait) in
            if takesTurn {
                let wrong = if case .success(.wrongPasscode) = result { true } else { false }
                passcodeChecked(from: address, wrong: wrong)
            }
            let lockKept = access.end(wait)
            switch result {
            case .success(.answer(let value, let opened, let upgraded)):
                // Delivered against the room as it is now: in memory, its lock; otherwise the stored one, if no
                // lock change came while the read waited.
                let allowed = if let entry = rooms[id] {
                    RoomAccess.verdict(lock: entry.passcode, isMember: member(of: entry, visitor) != nil,
                                       opened: opened, passcode: nil) == .allowed
                } else {
                    lockKept
                }
                guard allowed else {
                    return readJournal(id, visitor, address: address, lockedHint: lockedHint, query: query, done: done)
                }
                if let upgraded { adopt(upgraded.new, replacing: upgraded.old, in: id) }
                done(.success(value))
            case .success(.locked):
                done(.failure(Self.locked(lockedHint)))
            case .success(.wrongPasscode):
                done(.failure(Self.wrongPasscode))
            case .failure(let error):
                logger.error("could not read the journal", metadata: ["room": "\(id)", "error": "\(error)"])
                done(.failure(Refusal(code: .unavailable,
                                      message: "the server could not read its journal just now; try again")))
            }
        }
        let finish = LoopBound(settle, loop: transport.loop)
        let read = { [self] in
            // In its turn, the room as it is now.
            let source: LockSource = rooms[id].map {
                .memory($0.passcode, isMember: member(of: $0, visitor) != nil)
            } ?? .stored
            let wait = access.begin(id)
            let lockLogger = logger
            let transport = transport
            let workFactor = configuration.passcodeIterations
            let tokenHash = visitor.token.map { ResumeToken($0).hash }, passcode = visitor.passcode
            store.read({ (store: any RoomStore) throws(StoreError) -> JournalAnswer<T> in
                let lock: PasscodeVerifier?, isMember: Bool
                switch source {
                case .memory(let known, let member):
                    (lock, isMember) = (known, member)
                case .stored:
                    let stored = try store.loadRoom(id)
                    lock = PasscodeVerifier.lock(stored: stored?.passcode, room: id, logger: lockLogger)
                    isMember = tokenHash.map { hash in
                        stored?.members.contains { ResumeToken.sameHash($0.tokenHash, hash) } ?? false
                    } ?? false
                }
                switch RoomAccess.verdict(lock: lock, isMember: isMember, opened: nil, passcode: passcode) {
                case .allowed:
                    return .answer(try query(store), opened: nil, upgraded: nil)
                case .refused:
                    return .locked
                case .check(let passcode, let lock):
                    guard case .right(let upgraded) = lock.check(passcode, workFactor: workFactor) else { return .wrongPasscode }
                    return .answer(try query(store), opened: lock.encoded, upgraded: upgraded.map { (lock, $0) })
                }
            }) { result in
                transport.post { finish.value(result, wait) }
            }
        }
        guard takesTurn else { return read() }
        whenPasscodeMayBeChecked(from: address, start: read) {
            done(.failure(Self.tooManyWrongPasscodes))
        }
    }

    /// The stats report of a room, from the store's running totals: one row per UTC day for the totals and
    /// streaks (which reach back to the first day), and the window's quarters for its days.
    static func report(of room: RoomID, days: Int, zone: TimeZone,
                       nowMs: Int64) -> @Sendable (any RoomStore) throws(StoreError) -> FocusReport {
        { (store: any RoomStore) throws(StoreError) in
            let quarters = FocusReport.quarterRange(days: days, timeZone: zone, nowMs: nowMs)
            return FocusReport.make(room: room, totals: try store.journalTotals(room: room, quarters: quarters),
                                    days: days, timeZone: zone, nowMs: nowMs)
        }
    }

    /// A `stats` request over the WebSocket: the connection's later frames wait for its answer.
    func stats(room: String?, days: Int?, tz: String?, passcode: String?, ref: Ref?,
               connection: ConnectionID, at now: ClockReading) {
        func refuse(_ code: ErrorCode, _ message: String, field: String?) {
            reply(.error(code: code, message: message, field: field, ref: ref), to: connection)
        }
        guard let session = sessions[connection] else { return }
        guard let name = room ?? session.room?.rawValue else {
            return refuse(.badRequest, "name the room, or join it first", field: "room")
        }
        let roomID: RoomID
        do { roomID = try RoomID(validating: name) } catch { return self.refuse(error, ref: ref, to: connection) }
        let days = days ?? 14
        guard FocusReport.dayRange.contains(days) else {
            return refuse(.badRequest, "days must be \(FocusReport.dayRange.lowerBound)–\(FocusReport.dayRange.upperBound)", field: "days")
        }
        guard let zone = FocusReport.timeZone(named: tz ?? session.timeZone ?? "UTC") else {
            return refuse(.badRequest, Self.badTimeZone, field: "tz")
        }
        // The connection's later frames wait for this answer, so replies keep the order of requests.
        suspend(connection)
        readJournal(roomID, RoomAccess.Visitor(connection: connection, passcode: passcode), address: session.address, lockedHint: "ask with its passcode",
                    query: Self.report(of: roomID, days: days, zone: zone, nowMs: now.wallMs)) { [self] result in
            defer { resume(connection) }
            guard sessions[connection] != nil else { return }
            switch result {
            case .success(let report): reply(.stats(StatsReportPayload(report), ref: ref), to: connection)
            case .failure(let refusal): refuse(refusal.code, refusal.message, field: refusal.field)
            }
        }
    }
}
