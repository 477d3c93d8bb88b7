import PomodoroCore

// A room's webhooks and their outbox in the store of record: the tables (migration "webhooks"), the
// statements, the one codec between rows and records, and how a `WebhookChange` is written. Both SQL stores
// use these; each only runs them.

/// The reads the webhook delivery needs; writes go through `RoomStore.apply` (`StoreChange.webhook`), so a
/// delivery's result is fenced on a cluster like every write.
public protocol WebhookStore: Sendable {
    /// The room's webhooks in id order (every room's, without a room).
    func webhooks(room: RoomID?) throws(StoreError) -> [WebhookRecord]
    /// For each switched-on webhook with something due, its oldest due delivery (deliveries go out in
    /// order, one at a time per webhook), soonest first, at most `limit`.
    func nextDeliveries(limit: Int) throws(StoreError) -> [(WebhookRecord, WebhookDelivery)]
    /// The webhook's last `limit` deliveries, delivered, failed or due, newest first.
    func recentDeliveries(room: RoomID, webhook: Int, limit: Int) throws(StoreError) -> [WebhookDelivery]
}

extension SchemaHistory {
    /// Migration "webhooks": a room's webhooks, and the outbox of their deliveries.
    public static func webhooks(_ t: SQLColumnTypes) -> String {
        """
        CREATE TABLE webhook (
            room_id \(t.text) NOT NULL,
            id \(t.integer) NOT NULL,
            url \(t.text) NOT NULL,
            -- The kinds it wants, comma-separated ('phase_started,phase_completed').
            events \(t.text) NOT NULL,
            format \(t.text) NOT NULL,
            secret \(t.text) NOT NULL,
            language \(t.text) NOT NULL,
            enabled \(t.boolean) NOT NULL,
            created_ms \(t.integer) NOT NULL,
            disabled_reason \(t.text),
            PRIMARY KEY (room_id, id)
        )\(t.withoutRowID);

        -- One row per event per webhook, written in the transaction of the change it reports; delivered in id
        -- order per webhook. Rows delivered or given up stay as the webhook's recent deliveries (the last
        -- few are kept).
        CREATE TABLE webhook_outbox (
            id \(t.identity),
            room_id \(t.text) NOT NULL,
            webhook_id \(t.integer) NOT NULL,
            event_id \(t.text) NOT NULL,
            kind \(t.text) NOT NULL,
            created_ms \(t.integer) NOT NULL,
            body \(t.text) NOT NULL,
            -- 'due', 'delivered' or 'failed'.
            state \(t.text) NOT NULL,
            attempts \(t.integer) NOT NULL,
            next_attempt_ms \(t.integer) NOT NULL,
            last_attempt_ms \(t.integer),
            last_status \(t.integer),
            last_error \(t.text)
        );
        CREATE INDEX webhook_outbox_by_webhook ON webhook_outbox(room_id, webhook_id, state, id);
        CREATE INDEX webhook_outbox_due ON webhook_outbox(state, next_attempt_ms);
        """
    }
}

/// The webhook tables' statements and codec.
public enum WebhookRows {
    /// How many finished deliveries each webhook keeps, for its list of recent deliveries.
    public static let keptDeliveries = 20

    static let webhookColumns = ["room_id", "id", "url", "events", "format", "secret", "language", "enabled", "created_ms",
                                 "disabled_reason"]
    static let outboxColumns = ["room_id", "webhook_id", "event_id", "kind", "created_ms", "body", "state", "attempts",
                                "next_attempt_ms", "last_attempt_ms", "last_status", "last_error"]
    /// The outbox's columns as the reads name them (`o.`, and `event_created_ms` beside the webhook's).
    static let outboxSelect = """
        o.id AS seq, o.room_id, o.webhook_id, o.event_id, o.kind, o.created_ms AS event_created_ms, o.body, o.state,
        o.attempts, o.next_attempt_ms, o.last_attempt_ms, o.last_status, o.last_error
        """

    public static func values(of webhook: WebhookRecord) -> [ColumnValue] {
        [.text(webhook.room.rawValue), .integer(webhook.id), .text(webhook.url),
         .text(webhook.events.map(\.rawValue).joined(separator: ",")), .text(webhook.format.rawValue),
         .text(webhook.secret), .text(webhook.language), .boolean(webhook.enabled), .integer(webhook.createdMs), .text(webhook.disabledReason)]
    }

    public static func values(of delivery: WebhookDelivery) -> [ColumnValue] {
        [.text(delivery.room.rawValue), .integer(delivery.webhook), .text(delivery.eventID), .text(delivery.kind.rawValue),
         .integer(delivery.createdMs), .text(delivery.body), .text(delivery.state.rawValue), .integer(delivery.attempts),
         .integer(delivery.nextAttemptMs), .integer(delivery.lastAttemptMs), .integer(delivery.lastStatus),
         .text(delivery.lastError)]
    }

    static func room(_ raw: String) throws(StoreError) -> RoomID {
        do { return try RoomID(validating: raw) } catch { throw StoreError("a stored webhook's room is not valid: \(raw.debugDescription)") }
    }

    public static func webhook(from row: some StoreRow) throws(StoreError) -> WebhookRecord {
        let room = try room(row.string("room_id"))
        let formatName = try row.string("format")
        guard let format = WebhookFormat(rawValue: formatName) else {
            throw StoreError("room \(room): unknown webhook format \(formatName.debugDescription)")
        }
        let events = try row.string("events").split(separator: ",").compactMap { WebhookEventKind(rawValue: String($0)) }
        return WebhookRecord(room: room, id: try row.int("id"),
                             url: try row.string("url"), events: events, format: format,
                             secret: try row.string("secret"), language: try row.string("language"), enabled: try row.bool("enabled"),
                             createdMs: try row.int64("created_ms"), disabledReason: try row.text("disabled_reason"))
    }

    public static func delivery(from row: some StoreRow) throws(StoreError) -> WebhookDelivery {
        let room = try room(row.string("room_id"))
        let kindName = try row.string("kind"), stateName = try row.string("state")
        guard let kind = WebhookEventKind(rawValue: kindName), let state = DeliveryState(rawValue: stateName) else {
            throw StoreError("room \(room): unknown webhook delivery \(kindName.debugDescription) \(stateName.debugDescription)")
        }
        return WebhookDelivery(room: room, webhook: try row.int("webhook_id"), eventID: try row.string("event_id"),
                               kind: kind, createdMs: try row.int64("event_created_ms"), body: try row.string("body"),
                               state: state, attempts: try row.int("attempts"),
                               nextAttemptMs: try row.int64("next_attempt_ms"),
                               lastAttemptMs: try row.integer("last_attempt_ms"),
                               lastStatus: try row.optionalInt("last_status"), lastError: try row.text("last_error"),
                               seq: try row.int64("seq"))
    }

    // MARK: Reads

    public static func webhooks(room: RoomID?, _ d: SQLDialect) -> SQLStatements.Query {
        guard let room else { return .init(sql: "SELECT * FROM webhook ORDER BY room_id\(d.byteOrder), id", values: []) }
        return .init(sql: "SELECT * FROM webhook WHERE room_id = \(d.parameter(1)) ORDER BY id", values: [.text(room.rawValue)])
    }

    public static func nextDeliveries(limit: Int, _ d: SQLDialect) -> SQLStatements.Query {
        .init(sql: """
            SELECT w.*, \(outboxSelect)
            FROM webhook_outbox AS o JOIN webhook AS w ON w.room_id = o.room_id AND w.id = o.webhook_id
            WHERE w.enabled AND o.id IN (SELECT MIN(id) FROM webhook_outbox WHERE state = 'due'
                                         GROUP BY room_id, webhook_id)
            ORDER BY o.next_attempt_ms, o.id LIMIT \(d.limit(1))
            """, values: [.integer(limit)])
    }

    public static func recentDeliveries(room: RoomID, webhook: Int, limit: Int, _ d: SQLDialect) -> SQLStatements.Query {
        .init(sql: """
            SELECT \(outboxSelect) FROM webhook_outbox AS o
            WHERE o.room_id = \(d.parameter(1)) AND o.webhook_id = \(d.parameter(2))
            ORDER BY o.id DESC LIMIT \(d.limit(3))
            """, values: [.text(room.rawValue), .integer(webhook), .integer(limit)])
    }
}

extension SQLWriting {
    /// Writes one change to a room's webhooks or their outbox, in the caller's transaction.
    func apply(_ change: WebhookChange) throws(Failure) {
        let d = statements.dialect, p = d.parameter
        switch change {
        case .save(let webhook):
            try run(SQLStatements.upsert(into: "webhook", columns: WebhookRows.webhookColumns, key: ["room_id", "id"], d),
                    WebhookRows.values(of: webhook))
        case let .remove(room, id):
            for table in ["webhook_outbox", "webhook"] {
                try run("DELETE FROM \(table) WHERE room_id = \(p(1)) AND \(table == "webhook" ? "id" : "webhook_id") = \(p(2))",
                        [.text(room.rawValue), .integer(id)])
            }
        case let .queue(_, deliveries):
            let insert = SQLStatements.insert(into: "webhook_outbox", columns: WebhookRows.outboxColumns, d)
            for delivery in deliveries { try run(insert, WebhookRows.values(of: delivery)) }
        case let .attempted(attempt, disable):
            let room = ColumnValue.text(attempt.room.rawValue), hook = ColumnValue.integer(attempt.webhook)
            try run("""
                UPDATE webhook_outbox SET state = \(p(1)), attempts = \(p(2)), last_attempt_ms = \(p(3)),
                    next_attempt_ms = \(p(4)), last_status = \(p(5)), last_error = \(p(6))
                WHERE id = \(p(7)) AND room_id = \(p(8))
                """, [.text(attempt.state.rawValue), .integer(attempt.attempts), .integer(attempt.atMs),
                      .integer(attempt.nextAttemptMs), .integer(attempt.status), .text(attempt.error),
                      .integer(attempt.seq), room])
            if let disable {
                try run("UPDATE webhook SET enabled = \(p(1)), disabled_reason = \(p(2)) WHERE room_id = \(p(3)) AND id = \(p(4))",
                        [.boolean(false), .text(disable), room, hook])
            }
            if attempt.state != .due {
                // Keep the last few finished deliveries of the webhook, for its list; the rest go.
                try run("""
                    DELETE FROM webhook_outbox WHERE room_id = \(p(1)) AND webhook_id = \(p(2)) AND state <> 'due'
                    AND id < (SELECT MIN(id) FROM (SELECT id FROM webhook_outbox WHERE room_id = \(p(3))
                              AND webhook_id = \(p(4)) AND state <> 'due' ORDER BY id DESC
                              LIMIT \(WebhookRows.keptDeliveries)) AS kept)
                    """, [room, hook, room, hook])
            }
        }
    }
}
