import PomodoroCore

/// The room row's columns of schema v8, as plain values, the same in every store: the zone an aligned
/// room keeps to (and its pending settings'), and the scheduled run under way, so that a restart in the
/// middle of a set carries on with it.
///
/// The run's columns are all NULL when no run is under way; `run_own_*` hold the room's own settings the
/// run puts back when it ends, all NULL when the run kept the room's.
public struct RoomRunColumns: Equatable, Sendable {
    public var alignedZone: String?
    public var pendingAlignedZone: String?
    public var runSchedule: Int64?
    public var runName: String?
    /// NULL (with a run): until stopped.
    public var runLeft: Int64?
    public var runDone: Int64?
    public var runOwnFocusS: Int64?
    public var runOwnShortBreakS: Int64?
    public var runOwnLongBreakS: Int64?
    public var runOwnLongBreakEvery: Int64?
    public var runOwnAutoStart: Bool?
    public var runOwnAlignedZone: String?

    /// The columns, in the order `init(_:)` fills the fields and the stores write them.
    public static let columns = [
        "aligned_zone", "pending_aligned_zone", "run_schedule", "run_name", "run_left", "run_done",
        "run_own_focus_s", "run_own_short_break_s", "run_own_long_break_s", "run_own_long_break_every",
        "run_own_auto_start", "run_own_aligned_zone",
    ]

    public init(alignedZone: String?, pendingAlignedZone: String?, runSchedule: Int64?, runName: String?,
                runLeft: Int64?, runDone: Int64?, runOwnFocusS: Int64?, runOwnShortBreakS: Int64?,
                runOwnLongBreakS: Int64?, runOwnLongBreakEvery: Int64?, runOwnAutoStart: Bool?,
                runOwnAlignedZone: String?) {
        self.alignedZone = alignedZone
        self.pendingAlignedZone = pendingAlignedZone
        self.runSchedule = runSchedule
        self.runName = runName
        self.runLeft = runLeft
        self.runDone = runDone
        self.runOwnFocusS = runOwnFocusS
        self.runOwnShortBreakS = runOwnShortBreakS
        self.runOwnLongBreakS = runOwnLongBreakS
        self.runOwnLongBreakEvery = runOwnLongBreakEvery
        self.runOwnAutoStart = runOwnAutoStart
        self.runOwnAlignedZone = runOwnAlignedZone
    }

    public init(_ room: RoomRecord) {
        alignedZone = room.settings.aligned?.identifier
        pendingAlignedZone = room.pendingSettings?.aligned?.identifier
        guard let run = room.scheduledRun else { return }
        runSchedule = Int64(run.schedule.number)
        runName = run.name
        runLeft = run.focusSessionsLeft.map(Int64.init)
        runDone = Int64(run.focusSessionsDone)
        if let own = run.roomSettings {
            runOwnFocusS = Int64(own.focus)
            runOwnShortBreakS = Int64(own.shortBreak)
            runOwnLongBreakS = Int64(own.longBreak)
            runOwnLongBreakEvery = Int64(own.longBreakEvery)
            runOwnAutoStart = own.autoStart
            runOwnAlignedZone = own.aligned?.identifier
        }
    }

    /// The values in `columns`' order, for a store to bind as it binds its other values.
    public var values: [ColumnValue] {
        [.text(alignedZone), .text(pendingAlignedZone), .integer(runSchedule), .text(runName), .integer(runLeft),
         .integer(runDone), .integer(runOwnFocusS), .integer(runOwnShortBreakS), .integer(runOwnLongBreakS),
         .integer(runOwnLongBreakEvery), .boolean(runOwnAutoStart), .text(runOwnAlignedZone)]
    }

    /// `room` with these columns put in: its settings' zones and its run. A zone the system no longer knows
    /// or a half-written run is an error naming the room.
    public func apply(to room: inout RoomRecord) throws(StoreError) {
        do {
            room.settings.aligned = try Self.zone(alignedZone)
            if room.pendingSettings != nil {
                room.pendingSettings?.aligned = try Self.zone(pendingAlignedZone)
            }
            guard let runSchedule else {
                room.scheduledRun = nil
                return
            }
            guard let runName, let runDone else { throw StoreError("room \(room.id): a scheduled run without its name or count") }
            var own: RoomSettings?
            if let runOwnFocusS, let runOwnShortBreakS, let runOwnLongBreakS, let runOwnLongBreakEvery,
               let runOwnAutoStart {
                own = RoomSettings(focus: Int(runOwnFocusS), shortBreak: Int(runOwnShortBreakS),
                                   longBreak: Int(runOwnLongBreakS), longBreakEvery: Int(runOwnLongBreakEvery),
                                   autoStart: runOwnAutoStart,
                                   aligned: try Self.zone(runOwnAlignedZone))
            }
            room.scheduledRun = ScheduledRun(schedule: ScheduleID(Int(runSchedule)), name: runName,
                                             focusSessionsLeft: runLeft.map { Int($0) },
                                             focusSessionsDone: Int(runDone), roomSettings: own)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("room \(room.id): \(error)")
        }
    }

    private static func zone(_ name: String?) throws(RoomError) -> ZoneName? {
        guard let name else { return nil }
        return try ZoneName(name)
    }
}
