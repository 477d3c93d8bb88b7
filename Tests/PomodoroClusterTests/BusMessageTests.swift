import PomodoroCluster
import Testing

@Suite struct BusMessageTests {
    let member = BusMessage.RemoteConnection(node: "node-b:8080", connection: 42)

    @Test func everyKindReadsBackAsItWasWritten() throws {
        let messages: [BusMessage] = [
            .frame(from: member, room: "team-a", frame: #"{"type":"start","ref":"r1"}"#),
            .reply(node: "node-b:8080", connections: [42, 7, 9_000_000_000], frame: #"{"type":"ok","ref":"r1"}"#),
            .opened(member, room: "team-a"),
            .closed(member, room: "team-a"),
            .closed(member, room: "team-a", ended: .closed),
            .closed(member, room: "team-a", ended: .restart),
            .opened(member, room: "team-a", peer: "203.0.113.9"),
            .close(member, code: 4003, reason: "banned\nby the host"),
            .close(member, code: 4005, reason: "room moved", from: "node-a"),
            .reply(node: "node-b:8080", connections: [42], frame: "{}", from: "node-a"),
            .schedulesChanged(room: "team-a"),
            .handOff(rooms: ["team-a"], from: "node-a"),
            .handOff(rooms: ["team-a", "team-b", "team-c"], from: "node-a"),
            .refused(from: member, room: "team-a", answer: #"{"type":"error","code":"bad_json","message":"x"}"#),
            .closing(from: member, room: "team-a", code: 1008, reason: "rate limit"),
            .controlAPI(.command(from: "node-b:8080", number: 3, room: "team-a", tokenHash: "ab12",
                                 body: "{\"type\":\"start\"}\n\nv1 reply x 1\n")),
            .controlAPI(.answer(to: "node-b:8080", number: 3, status: 401, contentType: "application/json",
                                headers: [.init(name: "WWW-Authenticate", value: "Bearer realm=\"pomodoro\"")],
                                body: "{\"type\":\"error\"}\n\nmore", from: "node-a")),
            .controlAPI(.answer(to: "n", number: 1, status: 200, contentType: "", headers: [], body: "", from: "")),
            .controlAPI(.read(from: "node-b:8080", number: 4, room: "team-a", address: "203.0.113.9", bearer: "open sesame")),
            .controlAPI(.read(from: "n", number: 1, room: "r", address: "", bearer: "")),
            .controlAPI(.watch(from: "n", number: 9, room: "r", address: "198.51.100.4", bearer: "open sesame")),
            .controlAPI(.streamed(to: "n", number: 9, piece: "event: state\nid: 3\ndata: {\"type\":\"state\"}\n\n", from: "o")),
            .controlAPI(.streamed(to: "n", number: 9, piece: ": keep-alive\n\n", from: "o")),
            .controlAPI(.streamEnded(to: "n", number: 9, from: "o")),
            .controlAPI(.unwatch(from: "n", number: 9)),
        ]
        for message in messages {
            #expect(try BusMessage(decoding: message.encoded) == message)
        }
    }

    @Test func aConnectionClosedByItsClientIsSaidInTheBodyThatNodesFromBeforeItIgnore() throws {
        #expect(BusMessage.closed(member, room: "r", ended: .closed).encoded == "v1 closed node-b:8080 42 r\nclosed")
        #expect(BusMessage.closed(member, room: "r", ended: .restart).encoded == "v1 closed node-b:8080 42 r\nrestart")
        #expect(BusMessage.closed(member, room: "r").encoded == "v1 closed node-b:8080 42 r\n", "as before")
        // What a node from before it writes, or a body it does not know: a connection lost.
        #expect(try BusMessage(decoding: "v1 closed node-b:8080 42 r\n") == .closed(member, room: "r", ended: .lost))
        #expect(try BusMessage(decoding: "v1 closed node-b:8080 42 r\nhung up") == .closed(member, room: "r"))
    }

    @Test func theFrameTravelsUntouchedWhateverItHolds() throws {
        let frame = "{\"type\":\"setTask\",\n \"task\":\"a b\\nc 🍅\"}\n\n v1 reply x 1\n"
        let message = BusMessage.frame(from: member, room: "r", frame: frame)
        #expect(try BusMessage(decoding: message.encoded) == message)
        #expect(message.encoded.hasPrefix("v1 frame node-b:8080 42 r\n"))
    }

    @Test(arguments: ["", "no header", "v2 broadcast r\n{}", "v1 shout r\n{}", "v1 frame node 12\n{}",
                      "v1 frame node twelve r\n{}", "v1 reply node 1,x\n{}", "v1 broadcast\n{}", "v1 opened n 1 r extra\n", "v1 schedules\n", "v1 schedules a b\n",
                      "v1 frame  1 r\n{}", "v1 close n 1 loud\nbye", "v1 close n 1\nbye", "v1 reply n 1 a b\n{}", "v1 close n 1 4005 a b\n",
                      // No connection, or an empty one: the encoding never writes these, so they would not read
                      // back as written (found by the bus fuzzer).
                      "v1 reply 1b , a\n{}", "v1 reply n 7,\n{}", "v1 reply n ,7\n{}",
                      "v1 handoff team-a\n", "v1 handoff team-a node-a extra\n", "v1 handoff a n\nb\n\nc",
                      "v1 handoff a n\nb c", "v1 handoff a n\n\n",
                      "v1 api n 1 r\n{}", "v1 api n x r h\n{}", "v1 apianswer n 1 99\nt\n\n", "v1 apianswer n 1 200\n",
                      "v1 apianswer n 1 200\nt\nno colon\n\n{}", "v1 apiread n 1 r\nno credential line",
                      "v1 apiread n 1\na\nb", "v1 apiread n x r\na\nb",
                      "v1 apiwatch n 1 r\nno credential line", "v1 apistream n 1\nretry: 3000\n\n", "v1 apistream n 1 o\n",
                      "v1 apistreamend n x o\n", "v1 apiunwatch n\n", "v1 apiunwatch n 1 extra\n"])
    func messagesNotOfOursAreRefused(_ text: String) {
        #expect(throws: BusMessage.Malformed.self) { try BusMessage(decoding: text) }
    }

    @Test func aHandOffOfOneRoomIsWrittenAsBeforeAndOfManyKeepsTheFirstInItsHeader() throws {
        #expect(BusMessage.handOff(rooms: ["team-a"], from: "node-a").encoded == "v1 handoff team-a node-a\n")
        #expect(try BusMessage(decoding: "v1 handoff team-a node-a\n") == .handOff(rooms: ["team-a"], from: "node-a"))
        #expect(BusMessage.handOff(rooms: ["a", "b", "c"], from: "n").encoded == "v1 handoff a n\nb\nc")
    }

    @Test func channelsAreNamedForTheirNode() {
        #expect(BusMessage.nodeChannel("a") == "pomodoro:node:a")
        #expect(BusMessage.schedulesChannel == "pomodoro:schedules")
        #expect(BusMessage.schedulesChanged(room: "team-a").encoded == "v1 schedules team-a\n")
    }
}
