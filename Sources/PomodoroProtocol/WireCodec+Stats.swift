// The stats report and the focus history in JSON: inside the `stats` message, and as the bodies of the HTTP
// endpoints (docs/PROTOCOL.md §12), which are plain objects without `type` or `ref`.

extension WireCodec {
    // MARK: HTTP bodies

    /// The body of `GET /api/rooms/{room}/stats`: the `stats` message's object without `type` and `ref`.
    public static func encodeStatsBody(_ report: StatsReportPayload) -> [UInt8] {
        let object = JSONBuilder.object()
        set(report, into: object)
        return object.serialize()
    }

    /// Reads a stats body (for clients and tests). Errors name the offending field by its path.
    public static func decodeStatsBody(_ bytes: [UInt8]) throws(ProtocolError) -> StatsReportPayload {
        try decodeObject(bytes) { (fields) throws(ProtocolError) in try fields.statsReport() }
    }

    /// The JSON body of `GET /api/rooms/{room}/history`; `nextBefore` is always present (`null` at the end).
    public static func encodeHistory(_ history: HistoryPayload) -> [UInt8] {
        let object = JSONBuilder.object()
        object.set("room", history.room)
        let sessions = JSONBuilder.array(capacity: history.sessions.count)
        for session in history.sessions {
            let s = JSONBuilder.object()
            s.set("startedAt", session.startedAt)
            s.set("endedAt", session.endedAt)
            s.set("lengthSeconds", session.lengthSeconds)
            let members = JSONBuilder.array(capacity: session.members.count)
            for member in session.members {
                let m = JSONBuilder.object()
                m.set("id", member.id)
                m.set("name", member.name)
                m.set("task", member.task)
                m.set("focusSeconds", member.focusSeconds)
                members.append(m)
            }
            s.set("members", members)
            sessions.append(s)
        }
        object.set("sessions", sessions)
        object.set("nextBefore", history.nextBefore.map(JSONBuilder.integer))
        return object.serialize()
    }

    /// Reads a history body (for clients and tests).
    public static func decodeHistory(_ bytes: [UInt8]) throws(ProtocolError) -> HistoryPayload {
        try decodeObject(bytes) { (fields) throws(ProtocolError) -> HistoryPayload in
            var sessions: [FocusSessionPayload] = []
            for s in try fields.objects("sessions") {
                var members: [FocusSessionMemberPayload] = []
                for m in try s.objects("members") {
                    members.append(FocusSessionMemberPayload(id: try m.string("id"), name: try m.string("name"),
                                                             task: try m.string("task"),
                                                             focusSeconds: try m.int64("focusSeconds")))
                }
                sessions.append(FocusSessionPayload(startedAt: try s.int64("startedAt"), endedAt: try s.int64("endedAt"),
                                                    lengthSeconds: try s.int("lengthSeconds"), members: members))
            }
            return HistoryPayload(room: try fields.string("room"), sessions: sessions,
                                  nextBefore: try fields.optionalInt64("nextBefore"))
        }
    }

    /// The body of an HTTP error: `{"error":{"code","message","field"?}}`. The status goes with the code
    /// (`ErrorCode.httpStatus`).
    public static func encodeHTTPError(code: ErrorCode, message: String, field: String? = nil) -> [UInt8] {
        let error = JSONBuilder.object()
        error.set("code", code.rawValue)
        error.set("message", message)
        if let field { error.set("field", field) }
        let object = JSONBuilder.object()
        object.set("error", error)
        return object.serialize()
    }

    /// The body of an HTTP error for `error` (its ref, which HTTP has no use for, is left out).
    public static func encodeHTTPError(_ error: ProtocolError) -> [UInt8] {
        encodeHTTPError(code: error.code, message: error.message, field: error.field)
    }

    /// Reads an HTTP error body (for clients and tests); an unknown code reads as `internal`, as in `error`.
    public static func decodeHTTPError(_ bytes: [UInt8]) throws(ProtocolError) -> ProtocolError {
        try decodeObject(bytes) { (fields) throws(ProtocolError) -> ProtocolError in
            let error = try fields.object("error")
            return ProtocolError(code: ErrorCode(rawValue: try error.string("code")) ?? .internalError,
                                 message: try error.string("message"), field: try error.optionalString("field"))
        }
    }

    // MARK: Parts

    /// The report's keys, into the `stats` message or the HTTP body alike.
    static func set(_ report: StatsReportPayload, into object: JSONBuilder) {
        object.set("room", report.room)
        object.set("tz", report.tz)
        object.set("today", report.today)
        object.set("days", report.days)
        object.set("totals", totals(report.totals))
        object.set("perDay", days(report.perDay))
        let members = JSONBuilder.array(capacity: report.members.count)
        for member in report.members {
            let m = JSONBuilder.object()
            m.set("name", member.name)
            m.set("totals", totals(member.totals))
            m.set("perDay", days(member.perDay))
            members.append(m)
        }
        object.set("members", members)
    }

    private static func totals(_ t: StatsTotalsPayload) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("focusSessions", t.focusSessions)
        object.set("focusSeconds", t.focusSeconds)
        object.set("interruptions", t.interruptions)
        object.set("currentStreak", t.currentStreak)
        object.set("longestStreak", t.longestStreak)
        return object
    }

    private static func days(_ days: [DayTotalsPayload]) -> JSONBuilder {
        let array = JSONBuilder.array(capacity: days.count)
        for day in days {
            let d = JSONBuilder.object()
            d.set("date", day.date)
            d.set("focusSessions", day.focusSessions)
            d.set("focusSeconds", day.focusSeconds)
            d.set("interruptions", day.interruptions)
            array.append(d)
        }
        return array
    }

    /// Parses a whole HTTP body, which must be one JSON object, and reads it with `body`.
    static func decodeObject<T>(_ bytes: [UInt8],
                                        _ body: (FieldReader) throws(ProtocolError) -> T) throws(ProtocolError) -> T {
        try withBytes(of: bytes) { (buffer) throws(ProtocolError) -> T in
            try JSONNode.parse(buffer, maxDepth: serverMaxDepth) { (root) throws(ProtocolError) -> T in
                guard root.kind == .object else { throw ProtocolError(.badJSON, "the body must be a JSON object") }
                return try body(FieldReader(root, path: "", ref: nil))
            }
        }
    }
}

extension FieldReader {
    func statsTotals() throws(ProtocolError) -> StatsTotalsPayload {
        StatsTotalsPayload(focusSessions: try int("focusSessions"), focusSeconds: try int64("focusSeconds"),
                           interruptions: try int("interruptions"), currentStreak: try int("currentStreak"),
                           longestStreak: try int("longestStreak"))
    }

    func dayTotals(_ key: String) throws(ProtocolError) -> [DayTotalsPayload] {
        var days: [DayTotalsPayload] = []
        for d in try objects(key) {
            days.append(DayTotalsPayload(date: try d.string("date"), focusSessions: try d.int("focusSessions"),
                                         focusSeconds: try d.int64("focusSeconds"),
                                         interruptions: try d.int("interruptions")))
        }
        return days
    }

    /// The report's keys, from the `stats` message or the HTTP body alike.
    func statsReport() throws(ProtocolError) -> StatsReportPayload {
        let (room, tz, today, days) = (try string("room"), try string("tz"), try string("today"), try int("days"))
        let totals = try object("totals").statsTotals()
        let perDay = try dayTotals("perDay")
        var members: [MemberStatsPayload] = []
        for m in try objects("members") {
            members.append(MemberStatsPayload(name: try m.string("name"), totals: try m.object("totals").statsTotals(),
                                              perDay: try m.dayTotals("perDay")))
        }
        return StatsReportPayload(room: room, tz: tz, today: today, days: days, totals: totals, perDay: perDay,
                                  members: members)
    }
}
