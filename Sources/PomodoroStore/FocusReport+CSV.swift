import Foundation
import PomodoroCore

extension FocusReport {
    /// The columns of `csv(_:timeZone:)`.
    public static let csvHeader = "room,started_at,ended_at,length_seconds,member_id,member_name,task,focus_seconds"

    /// The focus journal as CSV (RFC 4180, CRLF line ends): one row per participant of each session, in
    /// the order given, and one row with empty member fields for a session nobody was present for. Times
    /// are ISO 8601 in `timeZone` with its offset at that moment ("2026-11-21T09:30:00+01:00").
    ///
    /// Text fields are names and tasks people typed. One that starts like a formula (`=`, `+`, `-`, `@`,
    /// tab, CR) gets a leading `'`, so a spreadsheet shows it instead of evaluating it.
    public static func csv(_ sessions: [FocusSessionRecord], timeZone: TimeZone) -> String {
        let zone = LocalDays(timeZone)
        var lines = [csvHeader]
        for session in sessions {
            let common = [csvText(session.room.rawValue), zone.timestamp(atMs: session.startedAtMs),
                          zone.timestamp(atMs: session.endedAtMs), String(session.lengthSeconds)]
            if session.participants.isEmpty {
                lines.append((common + ["", "", "", ""]).joined(separator: ","))
            }
            for participant in session.participants {
                let fields = [csvText(participant.member.rawValue), csvText(participant.name),
                              csvText(participant.task), String(participant.focusMs / 1000)]
                lines.append((common + fields).joined(separator: ","))
            }
        }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// One text field, guarded against formula injection, then quoted if it must be.
    static func csvText(_ text: String) -> String {
        var field = text
        if let first = field.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) {
            field = "'" + field
        }
        guard field.unicodeScalars.contains(where: { ",\"\r\n".unicodeScalars.contains($0) }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
