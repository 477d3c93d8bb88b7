import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// What the server tells a client about its bounds, and how it words a refusal from the core.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct WelcomeLimitsTests {
    @Test func welcomeCarriesTheConfiguredLimitsAndARefusalIsTheOneMapping() throws {
        let server = try LiveServer { configuration in
            configuration.roomPolicy.maxTaskLength = 50
            configuration.roomPolicy.maxNameLength = 20
            configuration.roomPolicy.maxExtendSeconds = 120
            configuration.roomPolicy.maxPhaseLength = .seconds(7200)
        }
        let client = try WebSocketClient()
        client.start()
        defer {
            server.stop()
            client.stop()
            client.waitUntilFinished()
        }
        let ana = try Peer(client, port: server.port)
        ana.send(.join(room: "limits", name: "Ana", token: nil), ref: .string("j"))
        let limits = try ana.expect("welcome") { message -> LimitsPayload? in
            if case let .welcome(_, _, _, limits, _) = message { return limits }
            return nil
        }
        #expect(limits == LimitsPayload(maxNameLength: 20, maxTaskLength: 50, minPasscodeLength: 4, maxPasscodeLength: 64,
                                        maxExtendSeconds: 120, maxPhaseSeconds: 7200, minFocusSeconds: 1,
                                        maxSettingSeconds: 14_400, maxLongBreakEvery: 12))

        // The core's refusal reaches the client exactly as ProtocolError(RoomError) words it.
        ana.send(.extend(seconds: 121), ref: .number(5))
        let refusal = try ana.expect("error") { message -> ServerMessage? in
            if case .error = message { return message }
            return nil
        }
        let expected = ProtocolError(.invalidArgument(field: "seconds",
                                                      reason: "must be a non-zero number of seconds within ±120"),
                                     ref: .number(5))
        #expect(refusal == .error(expected))
        #expect(refusal == .error(code: .badRequest, message: "seconds must be a non-zero number of seconds within ±120",
                                  field: "seconds", ref: .number(5)))
    }
}
