import PomodoroStore
import Testing

@Suite struct CountedNounsTests {
    @Test func oneIsSingularEveryOtherCountPlural() {
        #expect(counted(1, "room") == "1 room")
        #expect(counted(0, "room") == "0 rooms")
        #expect(counted(2, "focus session") == "2 focus sessions")
        #expect(counted(1, "webhook delivery", plural: "webhook deliveries") == "1 webhook delivery")
        #expect(counted(3, "webhook delivery", plural: "webhook deliveries") == "3 webhook deliveries")
    }
}
