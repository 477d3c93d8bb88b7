import PomodoroClient
import Testing

/// `pomo` names the room in the WebSocket address it opens, for a proxy that sends a room's members to one
/// cluster node (docs/CLUSTER.md).
struct ServerAddressRoomTests {
    @Test func theRoomGoesInTheQueryEscaped() throws {
        #expect(ServerAddress(host: "h", port: 1).path(forRoom: "team-alpha") == "/ws?room=team-alpha")
        #expect(ServerAddress(host: "h", port: 1).path(forRoom: "Café Ü") == "/ws?room=Caf%C3%A9%20%C3%9C")
        #expect(ServerAddress(host: "h", port: 1, path: "/pomodoro/ws?x=1").path(forRoom: "a&b")
                == "/pomodoro/ws?x=1&room=a%26b")
        let parsed = try ServerAddress(parsing: "ws://127.0.0.1:8080")
        #expect(parsed.path(forRoom: "r") == "/ws?room=r")
    }
}
