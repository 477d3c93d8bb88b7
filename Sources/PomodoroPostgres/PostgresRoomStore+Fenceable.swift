import PomodoroStore

/// The fence a cluster keeps on each room (`PostgresRoomStore+Fencing.swift`).
extension PostgresRoomStore: FenceableRoomStore {}
