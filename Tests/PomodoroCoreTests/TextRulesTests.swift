import Testing
@testable import PomodoroCore

/// Names and tasks bounded in what they cost to send and to draw, not only in characters.
@Suite struct TextRulesTests {
    /// One character of 16 KB: a letter under 8,150 combining acute accents.
    static let heavyCharacter = "a" + String(repeating: "\u{301}", count: 8150)

    @Test(arguments: [
        heavyCharacter,
        "Ada" + String(repeating: "\u{301}", count: 5),                  // five marks on one letter
        "A\u{20DD}\u{20DD}\u{20DD}\u{20DD}\u{20DD}",                      // five enclosing marks
        String(repeating: "🇯🇵", count: 21),                             // 21 characters, 168 bytes
        "\u{200B}", "Ada\u{200B}", "\u{3164}", "\u{3164}\u{3164}", "\u{FFA0}", "\u{115F}\u{1160}",
        "\u{2060}", "\u{FEFF}Ada", "\u{180E}",
        "Ada\u{E0041}", "\u{E0001}", "\u{E007F}",                         // tag characters
        "\u{061C}", "Ada\u{061C}x",                                       // the Arabic letter mark
        "\u{200D}", "\u{200C}\u{200D}", "\u{FE0F}", "\u{2800}", "\u{301}", "\u{34F}", "\u{AD}",
        "\u{3000}", "\u{A0}\u{A0}", "\u{1680}",
    ])
    func namesThatWeighTooMuchOrShowNothingAreRefused(name: String) throws {
        var t = TestRoom()
        let before = t.snapshot
        #expect(caught { try t.join(name) }?.invalidField == "name")
        #expect(t.snapshot == before)
    }

    @Test(arguments: [
        "Nguye\u{302}\u{303}n",                  // Vietnamese with decomposed accents: two marks
        "A" + String(repeating: "\u{301}", count: 4),
        "स्त्री", "ক্ষ্ম", "한국어", "กำลัง", "می‌خواهم",     // scripts built of marks and joiners
        "👩🏽‍💻 Ada", "👨‍👩‍👧‍👦", "❤️", "🇯🇵🇫🇷",
        String(repeating: "𝕏", count: 40),         // 40 characters of 4 bytes: 160 bytes exactly
        String(repeating: "🇯🇵", count: 20),       // 20 flags: 160 bytes
        "x\u{200D}y",
    ])
    func namesInEveryScriptAreAccepted(name: String) throws {
        var t = TestRoom()
        let id = try t.add(name)
        #expect(t.member(id)?.name == name)
    }

    @Test func theLimitsAreBytesPerCharacterAndMarksPerCharacter() throws {
        let name = try TextRules.clean(String(repeating: "é", count: 40), field: "name", allowEmpty: false, maxLength: 40)
        #expect(name.utf8.count == 80)
        let tooHeavy = caught { try TextRules.clean(Self.heavyCharacter, field: "name", allowEmpty: false, maxLength: 40) }
        guard case .invalidArgument("name", let reason)? = tooHeavy else {
            Issue.record("not refused: \(String(describing: tooHeavy))")
            return
        }
        #expect(reason.contains("160 bytes"))
        let piled = caught { try TextRules.clean("a" + String(repeating: "\u{301}", count: 5), field: "name",
                                                 allowEmpty: false, maxLength: 40) }
        guard case .invalidArgument("name", let marks)? = piled else {
            Issue.record("not refused: \(String(describing: piled))")
            return
        }
        #expect(marks.contains("4 combining marks"))
    }

    @Test(arguments: [
        heavyCharacter,
        "write" + String(repeating: "\u{301}", count: 5),
        String(repeating: "🍅", count: 201),
        "\u{200B}", "\u{200D}\u{FE0F}", "task\u{E0020}",
    ])
    func tasksThatWeighTooMuchOrShowNothingAreRefused(text: String) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.setTask("before"), by: ada)
        #expect(caught { try t.send(.setTask(text), by: ada) }?.invalidField == "text")
        #expect(t.member(ada)?.task == "before")
    }

    @Test func aTaskMayUseFourBytesForEachOfItsCharacters() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.setTask(String(repeating: "🍅", count: 200)), by: ada)
        #expect(t.member(ada)?.task.utf8.count == 800)
        #expect(caught { try t.send(.setTask(String(repeating: "🍅", count: 199) + "e\u{301}\u{301}"), by: ada) }?
            .invalidField == "text", "801 bytes")
    }
}
