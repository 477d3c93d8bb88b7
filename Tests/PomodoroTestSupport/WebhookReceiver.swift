import Foundation

/// A real HTTP receiver on loopback for the webhook tests: Tests/webhooks/receiver.py (Python's http.server)
/// in a temporary folder of its own, recording every request it gets; `stop()` ends it and removes the
/// folder. See the script for the paths and how each answers.
public final class WebhookReceiver: @unchecked Sendable {
    /// One request as the receiver recorded it.
    public struct Request: Sendable {
        public let path: String
        /// What the receiver answered (a /slow request answered after the sender had given up).
        public let status: Int
        public let headers: [String: String]
        public let body: String
        /// Checked by the receiver with Python's hmac and the secret `setSecret` gave; nil without either.
        public let signatureValid: Bool?
        /// The body as JSON.
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
        /// The `id` of a `json` body.
        public var eventID: String? { json["id"] as? String }
    }

    public let folder: URL
    public let port: Int
    private let process: LaunchedProcess

    public init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("pomodoro-webhooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("webhooks/receiver.py").path
        process = try ProcessLauncher.start("/usr/bin/env", ["python3", script, folder.path])
        let line = try process.nextLine(timeout: 10)
        guard line.hasPrefix("listening "), let port = Int(line.dropFirst("listening ".count)) else {
            process.kill()
            throw LaunchFailure("the receiver said \(line.debugDescription)")
        }
        self.port = port
    }

    /// `http://127.0.0.1:PORT` and `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The secret the receiver checks signatures with from now on.
    public func setSecret(_ secret: String) throws {
        try secret.write(to: folder.appendingPathComponent("secret"), atomically: true, encoding: .utf8)
    }

    /// While closed, `/gate` answers 503.
    public func setGate(open: Bool) throws {
        let gate = folder.appendingPathComponent("gate")
        if open { try? FileManager.default.removeItem(at: gate) } else { try Data().write(to: gate) }
    }

    /// While stalled, `/stall` holds every request it gets without an answer (60 s at most).
    public func setStall(_ stalled: Bool) throws {
        let stall = folder.appendingPathComponent("stall")
        if stalled { try Data().write(to: stall) } else { try? FileManager.default.removeItem(at: stall) }
    }

    /// Every request that arrived so far, answered or not (a held `/stall` one too), in the order they came.
    public func arrivals() -> [Request] {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("arrived.jsonl"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let o = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
            return Request(path: o["path"] as? String ?? "", status: 0, headers: [:], body: o["body"] as? String ?? "",
                           signatureValid: nil)
        }
    }

    /// Every request so far, in the order they came.
    public func requests() -> [Request] {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("received.jsonl"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let o = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
            return Request(path: o["path"] as? String ?? "", status: o["status"] as? Int ?? 0,
                           headers: o["headers"] as? [String: String] ?? [:], body: o["body"] as? String ?? "",
                           signatureValid: o["signature_valid"] as? Bool)
        }
    }

    /// Waits (bounded, stretched by TEST_TIME_SCALE) until the requests so far (answered ones, or with
    /// `arrivals` every one that arrived) satisfy `done`; returns them.
    public func wait(_ what: String, timeout: Double = 20, arrivals: Bool = false,
                     until done: ([Request]) -> Bool) throws -> [Request] {
        let deadline = TestTime.deadline(timeout)
        while true {
            let seen = arrivals ? self.arrivals() : requests()
            if done(seen) { return seen }
            guard Date() < deadline else {
                throw LiveTestFailure(description: "the receiver did not get \(what) within \(timeout) s; it got "
                    + seen.map { "\($0.path) \($0.status) \($0.body.prefix(80))" }.joined(separator: "\n"))
            }
            usleep(50_000)
        }
    }

    public func stop() {
        process.kill()
        _ = try? process.wait(timeout: 10)
        try? FileManager.default.removeItem(at: folder)
    }
}
