import Glibc
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// A room's webhooks (docs/PROTOCOL.md, "Webhooks"): what a room's changes queue in the outbox (in the same
// store batch as the change, so a crash cannot keep one without the other), the members' requests, and the
// delivery results coming back from the delivery thread (`WebhookDeliverer`).

/// The service thread's view of the rooms' webhooks: which rooms have which (the store has them all; this
/// copy decides whether a change queues anything, without a read), and what the last change of each such
/// room looked like (tasks, to say who changed theirs).
final class WebhookBook {
    var hooks: [RoomID: [WebhookRecord]] = [:]
    /// How many times this node changed each room's webhooks (a read begun before a change is stale).
    var changes: [RoomID: Int] = [:]
    var tasks: [RoomID: [String: String]] = [:]
    /// Rooms taken from another node whose webhooks are being read again: what they report meanwhile (the
    /// phases that ended while nobody ran the room come first) waits here for the hooks read.
    var reading: [RoomID: [(events: [WebhookEvent], snapshot: SnapshotPayload)]] = [:]
    var deliverer: WebhookDeliverer?
    var store: (any WebhookStore)?
}

extension RoomHub {
    var webhookSettings: WebhookSettings { configuration.webhooks }

    // MARK: Start and stop

    /// Starts delivering the outbox, with the webhooks the store had at start. Service thread. The deliverer
    /// is returned for whoever stops it, on any thread, once the service thread has ended.
    func startWebhooks(_ all: [WebhookRecord], store webhookStore: any WebhookStore) -> WebhookDeliverer {
        for hook in all { webhookBook.hooks[hook.room, default: []].append(hook) }
        webhookBook.store = webhookStore
        let deliverer = WebhookDeliverer(store: webhookStore, settings: webhookSettings,
                                         nowMs: { [clock] in clock.now().wallMs },
                                         report: back { [weak self] result in self?.deliveryFinished(result) })
        webhookBook.deliverer = deliverer
        deliverer.start()
        return deliverer
    }

    /// The router took a room another server ran: that server may have changed its webhooks meanwhile (this
    /// one may never have had them), so they are read again. What the room reports until then, first the
    /// phases that ended while nobody ran it, waits for them (`webhookBook.reading`) and is queued for the
    /// hooks read, in order.
    func webhooksBroughtBack(_ id: RoomID) {
        // In one process this server's copy is the store's: nobody else changes a room's webhooks.
        guard router.takesRoomsFromOtherNodes, let store, webhookBook.store != nil else { return }
        guard webhookBook.reading[id] == nil else { return }
        webhookBook.reading[id] = []
        let asked = webhookBook.changes[id, default: 0]
        store.read({ base throws(StoreError) -> [WebhookRecord]? in
            guard let s = base as? any WebhookStore else { return nil }
            return try s.webhooks(room: id)
        }, completion: back { [weak self] result in
            guard let self else { return }
            // A change made here meanwhile is newer than what was read.
            if case .success(let hooks?) = result, webhookBook.changes[id, default: 0] == asked {
                webhookBook.hooks[id] = hooks.isEmpty ? nil : hooks
            }
            let waiting = webhookBook.reading.removeValue(forKey: id) ?? []
            guard let hooks = webhookBook.hooks[id], hooks.contains(where: \.enabled) else {
                // No webhook after all: nothing was reported, and no task is remembered for a later one.
                webhookBook.tasks[id] = nil
                return
            }
            let rows = waiting.flatMap { queue($0.events, for: hooks, in: id, snapshot: $0.snapshot) }
            if let entry = rooms[id] { commit(rows, of: entry) } else if !rows.isEmpty { self.store?.enqueue(rows, completion: nil) }
        })
    }

    // MARK: What a room's change queues

    /// The outbox rows a room call's outcome queues for the room's webhooks, to be written with its changes.
    func webhookChanges(_ outcome: Outcome, in entry: RoomEntry, at now: ClockReading) -> [StoreChange] {
        let id = entry.room.id
        let hooks = webhookBook.hooks[id] ?? []
        guard webhookBook.reading[id] != nil || hooks.contains(where: \.enabled) else { return [] }
        // A tick alone (every second of a running phase) reports nothing.
        guard outcome.stateChanged || !outcome.events.isEmpty || outcome.scheduleEnded != nil else { return [] }
        let snapshot = snapshot(of: entry, at: now)
        var events: [WebhookEvent] = []
        func event(_ kind: WebhookEventKind) -> WebhookEvent {
            WebhookEvent(kind: kind, id: WebhookSignature.newEventID(), atMs: now.wallMs)
        }
        for roomEvent in outcome.events {
            switch roomEvent {
            case .control(.start, _, _):
                events.append(started(snapshot, event(.phaseStarted)))
            case let .phaseCompleted(completed, _, autoStarted, _, counted, length):
                // A focus that does not count as completed (shortened below the server's shortest focus)
                // is not announced as one. Its length is the time it ran, not what the settings say now (an
                // extension, a configure that took effect at its end, a scheduled set that gave the room its
                // own settings back).
                if completed != .focus || counted {
                    var e = event(.phaseCompleted)
                    e.phase = completed
                    e.seconds = Int(length.milliseconds / 1000)
                    e.minutes = WebhookEvent.minutes(ms: length.milliseconds)
                    events.append(e)
                }
                if autoStarted { events.append(started(snapshot, event(.phaseStarted))) }
            case let .memberJoined(_, name):
                var e = event(.memberJoined)
                e.member = name
                events.append(e)
            case let .memberLeft(_, name, _):
                // The room names whoever left: they are in no snapshot any more.
                var e = event(.memberLeft)
                e.member = name
                events.append(e)
            default: break
            }
        }
        if let run = outcome.scheduleEnded {
            var e = event(.scheduleEnded)
            e.schedule = run.name
            e.focusSessions = run.focusSessionsDone
            events.append(e)
        }
        // Tasks: the snapshot against the last one this book saw.
        let tasks = Dictionary(snapshot.members.map { ($0.id, $0.task) }, uniquingKeysWith: { a, _ in a })
        if let before = webhookBook.tasks[id] {
            for member in snapshot.members where before[member.id] != nil && before[member.id] != member.task {
                var e = event(.taskChanged)
                e.member = member.name
                e.task = member.task
                events.append(e)
            }
        }
        webhookBook.tasks[id] = tasks
        if webhookBook.reading[id] != nil {
            if !events.isEmpty { webhookBook.reading[id]!.append((events, snapshot)) }
            return []
        }
        return queue(events, for: hooks, in: id, snapshot: snapshot)
    }

    private func started(_ snapshot: SnapshotPayload, _ base: WebhookEvent) -> WebhookEvent {
        var e = base
        e.phase = snapshot.phase
        e.minutes = WebhookEvent.minutes(ms: snapshot.phaseLengthMs)
        e.names = snapshot.members.filter(\.present).map(\.name)
        return e
    }

    /// The rows of `events` for each of `hooks` that wants them (a `test` goes to the one hook given).
    func queue(_ events: [WebhookEvent], for hooks: [WebhookRecord], in room: RoomID,
               snapshot: SnapshotPayload) -> [StoreChange] {
        var deliveries: [WebhookDelivery] = []
        var snapshotJSON: [UInt8]?
        for event in events {
            for hook in hooks where hook.enabled && (event.kind == .test || hook.events.contains(event.kind)) {
                if hook.format == .json && snapshotJSON == nil { snapshotJSON = WireCodec.encodeSnapshotBody(snapshot) }
                let body = WebhookBodies.body(event, room: room, format: hook.format, language: hook.language,
                                                snapshotJSON: snapshotJSON, maxBytes: webhookSettings.maxPayloadBytes)
                deliveries.append(WebhookDelivery(room: room, webhook: hook.id, eventID: event.id, kind: event.kind,
                                                  createdMs: event.atMs, body: body))
            }
        }
        guard !deliveries.isEmpty else { return [] }
        wakeDelivererAfterCommit()
        return [.webhook(.queue(room, deliveries))]
    }

    /// Wakes the delivery thread once what is being enqueued now is written (an empty batch completes after
    /// the ones before it).
    private func wakeDelivererAfterCommit() {
        guard let deliverer = webhookBook.deliverer, let store else { return }
        transport.post { store.enqueue([]) { _ in deliverer.wake() } }
    }

    /// A schedule's warning or start (`scheduleTimerFired`): queued and written on their own.
    func webhookScheduleEvents(_ scheduleEvents: [ScheduleEventPayload], in entry: RoomEntry, at now: ClockReading) {
        let id = entry.room.id
        let hooks = webhookBook.hooks[id] ?? []
        guard webhookBook.reading[id] != nil || hooks.contains(where: \.enabled) else { return }
        let snapshot = snapshot(of: entry, at: now)
        var events: [WebhookEvent] = []
        for scheduleEvent in scheduleEvents {
            switch scheduleEvent {
            case let .warning(_, name, _, minutes):
                var e = WebhookEvent(kind: .scheduleWarning, id: WebhookSignature.newEventID(), atMs: now.wallMs)
                e.schedule = name
                e.minutes = minutes
                events.append(e)
            case .started:
                events.append(started(snapshot, WebhookEvent(kind: .phaseStarted, id: WebhookSignature.newEventID(),
                                                             atMs: now.wallMs)))
            default: break
            }
        }
        if webhookBook.reading[id] != nil {
            if !events.isEmpty { webhookBook.reading[id]!.append((events, snapshot)) }
            return
        }
        commit(queue(events, for: hooks, in: id, snapshot: snapshot), of: entry)
    }

    // MARK: Delivery results

    /// A delivery's result, from the delivery thread: written through the store's writer (the router's
    /// store where it guards writes); a webhook given up is switched off and the room told.
    func deliveryFinished(_ result: WebhookDeliverer.Result) {
        let room = result.webhook.room, hook = result.webhook.id
        guard let store, let deliverer = webhookBook.deliverer else { return }
        store.enqueue([.webhook(.attempted(result.attempt, disable: result.disabled))]) { _ in
            deliverer.settled(room, hook)
        }
        guard let reason = result.disabled else { return }
        webhookBook.changes[room, default: 0] += 1
        if let index = webhookBook.hooks[room]?.firstIndex(where: { $0.id == hook }) {
            webhookBook.hooks[room]?[index].enabled = false
            webhookBook.hooks[room]?[index].disabledReason = reason
        }
        logger.warning("a webhook failed for a day and was switched off", metadata: ["room": "\(room)", "webhook": "\(hook)"])
        if let entry = rooms[room] {
            let message = ServerMessage.event(room: room.rawValue, .webhookDisabled(webhook: hook, reason: reason),
                                              serverTime: clock.now().wallMs)
            entry.announce { [self] in fanOut.broadcast(message, in: entry) }
        }
    }

    // MARK: Requests

    /// A member's request about the room's webhooks: anyone in an open room; the host in a host-only one
    /// (the rule schedules follow).
    func webhookRequest(_ request: WebhookRequest, ref: Ref?, entry: RoomEntry, member: MemberID,
                        connection: ConnectionID, at now: ClockReading) {
        if entry.room.controlMode == .host && entry.room.hostID != member {
            return refuse(.forbidden, ref: ref, to: connection)
        }
        guard let store, webhookBook.store != nil else {
            return reply(.error(code: .unavailable, message: "webhooks need a database (--db)", field: nil, ref: ref),
                         to: connection)
        }
        func bad(_ field: String, _ message: String) {
            reply(.error(code: .badRequest, message: message, field: field, ref: ref), to: connection)
        }
        let id = entry.room.id
        var hooks = webhookBook.hooks[id] ?? []
        switch request {
        case .list:
            listWebhooks(id, ref: ref, to: connection)
        case .add(let fields):
            guard hooks.count < webhookSettings.maxPerRoom else {
                return reply(.error(code: .webhookLimit, message: "a room has at most \(webhookSettings.maxPerRoom) webhooks",
                                    field: nil, ref: ref), to: connection)
            }
            var hook = WebhookRecord(room: id, id: (hooks.map(\.id).max() ?? 0) + 1, url: "", events: [], format: .json,
                                     secret: WebhookSignature.newSecret(), createdMs: now.wallMs)
            if let problem = apply(fields, to: &hook) { return bad(problem.field, problem.message) }
            hooks.append(hook)
            webhookBook.hooks[id] = hooks
            webhookBook.changes[id, default: 0] += 1
            if webhookBook.tasks[id] == nil {
                let snapshot = snapshot(of: entry, at: now)
                webhookBook.tasks[id] = Dictionary(snapshot.members.map { ($0.id, $0.task) }, uniquingKeysWith: { a, _ in a })
            }
            let added = hook
            store.enqueue([.webhook(.save(added))], completion: back { [weak self] _ in
                self?.listWebhooks(id, ref: ref, to: connection, added: added.id, secret: added.secret)
            })
        case let .change(hookID, fields):
            guard let index = hooks.firstIndex(where: { $0.id == hookID }) else { return notFound(hookID, ref, connection) }
            var hook = hooks[index]
            if let problem = apply(fields, to: &hook) { return bad(problem.field, problem.message) }
            if fields.enabled == true { hook.disabledReason = nil }
            hooks[index] = hook
            webhookBook.hooks[id] = hooks
            webhookBook.changes[id, default: 0] += 1
            let changed = hook
            store.enqueue([.webhook(.save(changed))], completion: back { [weak self] _ in
                self?.listWebhooks(id, ref: ref, to: connection)
            })
        case .test(let hookID):
            guard let hook = hooks.first(where: { $0.id == hookID }) else { return notFound(hookID, ref, connection) }
            guard hook.enabled else {
                return reply(.error(code: .invalidState, message: "the webhook is switched off", field: "id", ref: ref),
                             to: connection)
            }
            let test = WebhookEvent(kind: .test, id: WebhookSignature.newEventID(), atMs: now.wallMs)
            commit(queue([test], for: [hook], in: id, snapshot: snapshot(of: entry, at: now)), of: entry)
            reply(.ok(command: request.type, appliesFrom: nil, ref: ref), to: connection)
        case .delete(let hookID):
            guard hooks.contains(where: { $0.id == hookID }) else { return notFound(hookID, ref, connection) }
            hooks.removeAll { $0.id == hookID }
            webhookBook.hooks[id] = hooks.isEmpty ? nil : hooks
            webhookBook.changes[id, default: 0] += 1
            store.enqueue([.webhook(.remove(id, hookID))], completion: back { [weak self] _ in
                self?.listWebhooks(id, ref: ref, to: connection)
            })
        }
    }

    private func notFound(_ hook: Int, _ ref: Ref?, _ connection: ConnectionID) {
        reply(.error(code: .notFound, message: "the room has no webhook \(hook)", field: "id", ref: ref), to: connection)
    }

    /// Checks and applies a request's fields; returns what is wrong.
    private func apply(_ fields: WebhookFields, to hook: inout WebhookRecord) -> (field: String, message: String)? {
        if let url = fields.url {
            if let problem = WebhookAddress.urlProblem(url) { return ("url", "url " + problem) }
            if !webhookSettings.allowPrivate, let literal = Self.literalAddress(in: url),
               let why = WebhookAddress.refusal(literal) {
                return ("url", "url is a \(why) address, which webhooks may not reach on this server")
            }
            hook.url = url
        }
        if let names = fields.events {
            var kinds: [WebhookEventKind] = []
            for name in names {
                guard let kind = WebhookEventKind(rawValue: name), kind != .test else {
                    return ("events", "events must be among " + WebhookEventKind.subscribable.map(\.rawValue).joined(separator: ", "))
                }
                if !kinds.contains(kind) { kinds.append(kind) }
            }
            guard !kinds.isEmpty else { return ("events", "events must name at least one event") }
            hook.events = kinds.sorted()
        }
        if let name = fields.format {
            guard let format = WebhookFormat(rawValue: name) else { return ("format", "format must be json, slack or discord") }
            hook.format = format
        }
        if let language = fields.language {
            guard ["en", "ko", "zh-Hans", "zh-Hant"].contains(language) else {
                return ("language", "language must be en, ko, zh-Hans or zh-Hant")
            }
            hook.language = language
        }
        if let enabled = fields.enabled { hook.enabled = enabled }
        return nil
    }

    /// The address a URL's host names literally (`http://10.0.0.1/`, `http://[::1]/`), if it does.
    static func literalAddress(in url: String) -> [UInt8]? {
        guard let start = url.range(of: "://") else { return nil }
        var host = String(url[start.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" })
        if host.hasPrefix("[") {
            host = String(host.dropFirst().prefix { $0 != "]" })
            var address = in6_addr()
            guard inet_pton(AF_INET6, host, &address) == 1 else { return nil }
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        host = String(host.prefix { $0 != ":" })
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// Replies with the room's webhooks and their last deliveries, read from the store.
    func listWebhooks(_ id: RoomID, ref: Ref?, to connection: ConnectionID, added: Int? = nil, secret: String? = nil) {
        guard let store else { return }
        let hooks = webhookBook.hooks[id] ?? []
        store.read({ base throws(StoreError) -> [Int: [WebhookDelivery]] in
            guard let s = base as? any WebhookStore else { return [:] }
            var result: [Int: [WebhookDelivery]] = [:]
            for hook in hooks { result[hook.id] = try s.recentDeliveries(room: id, webhook: hook.id, limit: 10) }
            return result
        }, completion: back { [weak self] result in
            let deliveries = (try? result.get()) ?? [:]
            let payload = WebhooksPayload(room: id.rawValue, webhooks: hooks.map { hook in
                WebhookPayload(id: hook.id, url: hook.url, events: hook.events.map(\.rawValue), format: hook.format.rawValue,
                               language: hook.language, enabled: hook.enabled, disabledReason: hook.disabledReason,
                               createdAt: hook.createdMs, deliveries: (deliveries[hook.id] ?? []).map { d in
                                   WebhookDeliveryPayload(eventID: d.eventID, event: d.kind.rawValue, state: d.state.rawValue,
                                                          attempts: d.attempts, status: d.lastStatus, error: d.lastError,
                                                          createdAt: d.createdMs, lastAttemptAt: d.lastAttemptMs,
                                                          nextAttemptAt: d.state == .due ? d.nextAttemptMs : nil)
                               })
            }, added: added, secret: secret)
            self?.reply(.webhooks(payload, ref: ref), to: connection)
        })
    }
}
