import Foundation
import PomodoroCore
@testable import PomodoroServer
import Testing

/// The webhooks' pure parts: which addresses they may reach, their bodies, texts and signature.
struct WebhookBodyTests {
    static func v4(_ text: String) -> [UInt8] { text.split(separator: ".").map { UInt8($0)! } }

    @Test func privateLoopbackLinkLocalAndMetadataAddressesAreRefused() {
        for address in ["127.0.0.1", "10.0.0.5", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.1.1",
                        "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255"] {
            #expect(WebhookAddress.refusal(Self.v4(address)) != nil, "\(address)")
        }
        #expect(WebhookAddress.refusal(Self.v4("169.254.169.254")) == "metadata")
        for address in ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1"] {
            #expect(WebhookAddress.refusal(Self.v4(address)) == nil, "\(address)")
        }
        var loopback6 = [UInt8](repeating: 0, count: 16)
        loopback6[15] = 1
        #expect(WebhookAddress.refusal(loopback6) == "loopback")
        // ::ffff:10.0.0.1 and 64:ff9b::127.0.0.1 reach IPv4 private and loopback addresses.
        #expect(WebhookAddress.refusal([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1]) == "private")
        #expect(WebhookAddress.refusal([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1]) == "loopback")
        #expect(WebhookAddress.refusal([0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1]) == "link-local")
        #expect(WebhookAddress.refusal([0xfd, 0] + [UInt8](repeating: 0, count: 14)) != nil)
        #expect(WebhookAddress.refusal([0x26, 0x06, 0x47, 0x00] + [UInt8](repeating: 0, count: 12)) == nil)
        #expect(RoomHub.literalAddress(in: "http://[::1]:8080/x") == loopback6)
        #expect(RoomHub.literalAddress(in: "https://10.1.2.3/x") == [10, 1, 2, 3])
        #expect(RoomHub.literalAddress(in: "https://example.com/x") == nil)
    }

    @Test func urlsMustBeHTTPWithAHostAndNoCredentials() {
        #expect(WebhookAddress.urlProblem("https://hooks.slack.com/services/T0/B0/x") == nil)
        #expect(WebhookAddress.urlProblem("http://example.com:8080") == nil)
        for bad in ["ftp://example.com", "https://", "https://u:p@example.com/", "https://a b.com/", "file:///etc/passwd",
                    "https://example.com/\u{0}", String(repeating: "a", count: 2001)] {
            #expect(WebhookAddress.urlProblem(bad) != nil, "\(bad.prefix(40))")
        }
    }

    /// RFC 4231, test case 2; and the header's form.
    @Test func theSignatureIsHMACSHA256OverTimestampAndBody() {
        let digest = WebhookSignature.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(WebhookSignature.hex(digest) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let header = WebhookSignature.header(secret: "Jefe", timestamp: 1_795_000_000, body: Array("{}".utf8))
        let expected = WebhookSignature.hex(WebhookSignature.hmacSHA256(key: Array("Jefe".utf8),
                                                                          message: Array("1795000000.{}".utf8)))
        #expect(header == "t=1795000000,v1=" + expected)
        #expect(WebhookSignature.newSecret() != WebhookSignature.newSecret())
        #expect(WebhookSignature.newEventID().count == 36)
    }

    static let room = try! RoomID(validating: "team-alpha")
    static func started(names: [String] = ["Ada", "Bo", "Chen"]) -> WebhookEvent {
        var e = WebhookEvent(kind: .phaseStarted, id: "evt_1", atMs: 1_795_000_000_000)
        e.phase = .focus
        e.minutes = 25
        e.names = names
        return e
    }

    @Test func theTextsSayWhatHappenedInFourLanguages() {
        #expect(WebhookTexts.text(Self.started(), room: Self.room, language: "en")
                == "team-alpha started a 25-minute focus: Ada, Bo, Chen")
        #expect(WebhookTexts.text(Self.started(), room: Self.room, language: "zh-Hans")
                == "team-alpha 开始了 25 分钟专注：Ada、Bo、Chen")
        #expect(WebhookTexts.text(Self.started(), room: Self.room, language: "zh-Hant")
                == "team-alpha 開始了 25 分鐘專注：Ada、Bo、Chen")
        #expect(WebhookTexts.text(Self.started(), room: Self.room, language: "ko")
                == "team-alpha에서 25분 집중을 시작했습니다: Ada, Bo, Chen")
        var warning = WebhookEvent(kind: .scheduleWarning, id: "evt_2", atMs: 0)
        warning.schedule = "Standup"
        warning.minutes = 5
        #expect(WebhookTexts.text(warning, room: Self.room, language: "en") == "Standup starts in 5 minutes")
        #expect(WebhookTexts.text(warning, room: Self.room, language: "fr") == "Standup starts in 5 minutes")
        // A name holding a placeholder stays as written.
        #expect(WebhookTexts.text(Self.started(names: ["{room}"]), room: Self.room, language: "en")
                == "team-alpha started a 25-minute focus: {room}")
    }

    @Test func theJSONBodyCarriesTheEventAndTheSnapshotOrSaysItLeftItOut() throws {
        let snapshot = Array(#"{"id":"team-alpha","members":[]}"#.utf8)
        let body = WebhookBodies.body(Self.started(names: ["A\"da\u{1}\n"]), room: Self.room, format: .json,
                                        language: "en", snapshotJSON: snapshot, maxBytes: 65_536)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(json["id"] as? String == "evt_1")
        #expect(json["type"] as? String == "phase_started")
        #expect(json["createdAt"] as? Int == 1_795_000_000_000)
        #expect((json["data"] as? [String: Any])?["members"] as? [String] == ["A\"da\u{1}\n"])
        #expect((json["snapshot"] as? [String: Any])?["id"] as? String == "team-alpha")
        let small = WebhookBodies.body(Self.started(), room: Self.room, format: .json, language: "en",
                                         snapshotJSON: Array(repeating: UInt8(ascii: " "), count: 2000), maxBytes: 1024)
        let trimmed = try #require(try JSONSerialization.jsonObject(with: Data(small.utf8)) as? [String: Any])
        #expect(trimmed["snapshot"] == nil && trimmed["snapshotOmitted"] as? Bool == true)
    }

    @Test func chatBodiesAreClippedToWhatTheChatTakes() throws {
        var task = WebhookEvent(kind: .taskChanged, id: "evt_3", atMs: 0)
        task.member = "Ada"
        task.task = String(repeating: "x", count: 5000)
        let discord = WebhookBodies.body(task, room: Self.room, format: .discord, language: "en", snapshotJSON: nil,
                                           maxBytes: 65_536)
        let content = try #require((try JSONSerialization.jsonObject(with: Data(discord.utf8)) as? [String: Any])?["content"] as? String)
        #expect(content.count == 2000 && content.hasSuffix("…"))
    }
}
