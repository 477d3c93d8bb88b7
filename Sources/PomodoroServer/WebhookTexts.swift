import PomodoroCore

/// The chat messages of the `slack` and `discord` formats (and the `json` format's `text`), in the four
/// languages of the page and pomo (web/i18n.js); English for any other.
enum WebhookTexts {
    enum Line {
        case focusStarted, breakStarted, focusCompleted, breakCompleted, warning, scheduleEnded, joined, left,
             task, taskCleared, test
    }

    static func text(_ event: WebhookEvent, room: RoomID, language: String) -> String {
        let line: Line = switch event.kind {
        case .phaseStarted: event.phase == .focus ? .focusStarted : .breakStarted
        case .phaseCompleted: event.phase == .focus ? .focusCompleted : .breakCompleted
        case .scheduleWarning: .warning
        case .scheduleEnded: .scheduleEnded
        case .memberJoined: .joined
        case .memberLeft: .left
        case .taskChanged: (event.task ?? "").isEmpty ? .taskCleared : .task
        case .test: .test
        }
        let separator = language.hasPrefix("zh") ? "、" : ", "
        var text = template(line, language)
        let values: [(String, String)] = [
            ("{room}", room.rawValue), ("{n}", event.minutes.map(String.init) ?? ""),
            ("{sessions}", event.focusSessions.map(String.init) ?? "0"),
            ("{names}", event.names.isEmpty ? "—" : event.names.joined(separator: separator)),
            ("{member}", event.member ?? ""), ("{task}", event.task ?? ""), ("{schedule}", event.schedule ?? ""),
        ]
        // Replaced in one pass over the template, so a name or task holding "{room}" stays as written.
        for (key, value) in values { text = text.replacingOccurrences(of: key, with: "\u{0}\(key)\u{0}") }
        var out = ""
        for (index, piece) in text.split(separator: "\u{0}", omittingEmptySubsequences: false).enumerated() {
            out += index % 2 == 1 ? (values.first { $0.0 == piece }?.1 ?? String(piece)) : String(piece)
        }
        return out
    }

    static func template(_ line: Line, _ language: String) -> String {
        switch language {
        case "ko": korean(line)
        case "zh-Hans": simplified(line)
        case "zh-Hant": traditional(line)
        default: english(line)
        }
    }

    private static func english(_ line: Line) -> String {
        switch line {
        case .focusStarted: "{room} started a {n}-minute focus: {names}"
        case .breakStarted: "{room} started a {n}-minute break"
        case .focusCompleted: "{room} completed a {n}-minute focus"
        case .breakCompleted: "{room}'s break is over"
        case .warning: "{schedule} starts in {n} minutes"
        case .scheduleEnded: "{schedule} ended after {sessions} focus sessions"
        case .joined: "{member} joined {room}"
        case .left: "{member} left {room}"
        case .task: "{member} is working on: {task}"
        case .taskCleared: "{member} cleared their task"
        case .test: "A test from {room}: this webhook works"
        }
    }

    private static func korean(_ line: Line) -> String {
        switch line {
        case .focusStarted: "{room}에서 {n}분 집중을 시작했습니다: {names}"
        case .breakStarted: "{room}에서 {n}분 휴식을 시작했습니다"
        case .focusCompleted: "{room}에서 {n}분 집중을 마쳤습니다"
        case .breakCompleted: "{room}의 휴식이 끝났습니다"
        case .warning: "{schedule}이(가) {n}분 후에 시작합니다"
        case .scheduleEnded: "{schedule} 종료: 집중 {sessions}회 완료"
        case .joined: "{member} 님이 {room}에 들어왔습니다"
        case .left: "{member} 님이 {room}에서 나갔습니다"
        case .task: "{member} 님의 작업: {task}"
        case .taskCleared: "{member} 님이 작업을 지웠습니다"
        case .test: "{room}의 테스트 메시지: 이 웹훅이 작동합니다"
        }
    }

    private static func simplified(_ line: Line) -> String {
        switch line {
        case .focusStarted: "{room} 开始了 {n} 分钟专注：{names}"
        case .breakStarted: "{room} 开始了 {n} 分钟休息"
        case .focusCompleted: "{room} 完成了 {n} 分钟专注"
        case .breakCompleted: "{room} 的休息结束了"
        case .warning: "{schedule} 将在 {n} 分钟后开始"
        case .scheduleEnded: "{schedule} 已结束：完成 {sessions} 轮专注"
        case .joined: "{member} 加入了 {room}"
        case .left: "{member} 离开了 {room}"
        case .task: "{member} 正在做：{task}"
        case .taskCleared: "{member} 清除了任务"
        case .test: "来自 {room} 的测试：此 Webhook 工作正常"
        }
    }

    private static func traditional(_ line: Line) -> String {
        switch line {
        case .focusStarted: "{room} 開始了 {n} 分鐘專注：{names}"
        case .breakStarted: "{room} 開始了 {n} 分鐘休息"
        case .focusCompleted: "{room} 完成了 {n} 分鐘專注"
        case .breakCompleted: "{room} 的休息結束了"
        case .warning: "{schedule} 將在 {n} 分鐘後開始"
        case .scheduleEnded: "{schedule} 已結束：完成 {sessions} 輪專注"
        case .joined: "{member} 加入了 {room}"
        case .left: "{member} 離開了 {room}"
        case .task: "{member} 正在做：{task}"
        case .taskCleared: "{member} 清除了任務"
        case .test: "來自 {room} 的測試：此 Webhook 運作正常"
        }
    }
}
