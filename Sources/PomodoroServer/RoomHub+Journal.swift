import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// Reading a room's journal for the WebSocket's `stats` and the HTTP API alike: who may read it (members,
// or whoever knows a locked room's passcode, checked off the service thread behind the passcode gate), and
// the read itself, off the service thread.

extension RoomHub {
    /// What a reader of a room's journal may show, decided off the service thread for a locked room.
    enum JournalAccess: Sendable {
        /// Open room, or the reader is one of its members.
        case granted
        /// A locked room: `credential` must be its passcode (nil: none was given).
        case passcode(PasscodeVerifier?, credential: String?)
    }

    enum JournalAnswer<T: Sendable>: Sendable {
        /// The query's answer; `upgraded` when the room's passcode was checked and hashed anew (see `adopt`).
        case answer(T, upgraded: (old: PasscodeVerifier, new: PasscodeVerifier)? = nil)
        case locked
        case wrongPasscode
    }

    /// Reads a room's journal off the service thread for a reader at `address`: a locked room's passcode is
    /// checked there too (the room's stored lock when it is not in memory), once the address's passcode gate
    /// lets it, and a wrong one counts against the address as for joins; then `query` runs. `done` runs on
    /// the service thread; `lockedHint` says how this reader proves access to a locked room.
    func readJournal<T: Sendable>(_ id: RoomID, access: JournalAccess, address: String, lockedHint: String,
                                  query: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                                  done: @escaping (Result<T, Refusal>) -> Void) {
        let checksPasscode = if case .passcode(_, .some) = access { true } else { false }
        let settle = { [self] (result: Result<JournalAnswer<T>, StoreError>) in
            if checksPasscode {
                let wrong = if case .success(.wrongPasscode) = result { true } else { false }
                passcodeChecked(from: address, wrong: wrong)
            }
            switch result {
            case .success(.answer(let value, let upgraded)):
                if let upgraded { adopt(upgraded.new, replacing: upgraded.old, in: id) }
                done(.success(value))
            case .success(.locked):
                done(.failure(Refusal(code: .badPasscode, message: "this room is locked: \(lockedHint)",
                                      field: "passcode")))
            case .success(.wrongPasscode):
                done(.failure(Refusal(code: .badPasscode, message: "wrong passcode", field: "passcode")))
            case .failure(let error):
                logger.error("could not read the journal", metadata: ["room": "\(id)", "error": "\(error)"])
                done(.failure(Refusal(code: .unavailable,
                                      message: "the server could not read its journal just now; try again")))
            }
        }
        guard let store else {
            return done(.failure(Refusal(code: .unavailable,
                                         message: "this server runs without a database and keeps no stats")))
        }
        let finish = UncheckedBox(settle)
        let read = { [self] in
            let inMemory = rooms[id] != nil
            let lockLogger = logger
            let transport = transport
            store.read({ (store: any RoomStore) throws(StoreError) -> JournalAnswer<T> in
                if case .passcode(let known, let credential) = access {
                    let verifier = inMemory ? known
                        : PasscodeVerifier.lock(stored: try store.loadRoom(id)?.passcode, room: id, logger: lockLogger)
                    if let verifier {
                        guard let credential else { return .locked }
                        guard case .right(let upgraded) = verifier.check(credential) else { return .wrongPasscode }
                        return .answer(try query(store), upgraded: upgraded.map { (verifier, $0) })
                    }
                }
                return .answer(try query(store))
            }) { result in
                transport.post { finish.value(result) }
            }
        }
        guard checksPasscode else { return read() }
        whenPasscodeMayBeChecked(from: address, start: read) {
            done(.failure(Refusal(code: .rateLimited, message: "too many wrong passcodes; try again in a minute",
                                  field: "passcode")))
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

    /// Who may read `id`'s journal: everyone for an open room, a member (by connection or resume token),
    /// or whoever knows the passcode. A room not in memory may still be locked in the store.
    func journalAccess(to id: RoomID, connection: ConnectionID?, token: String?,
                       credential: String?) -> JournalAccess {
        if let connection, sessions[connection]?.room == id { return .granted }
        guard let entry = rooms[id] else { return .passcode(nil, credential: credential) }
        guard let verifier = entry.passcode else { return .granted }
        if let token, entry.room.hasMember(withToken: ResumeToken(token)) { return .granted }
        return .passcode(verifier, credential: credential)
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
        let access = journalAccess(to: roomID, connection: connection, token: nil, credential: passcode)
        // The connection's later frames wait for this answer, so replies keep the order of requests.
        suspend(connection)
        readJournal(roomID, access: access, address: session.address, lockedHint: "ask with its passcode",
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
