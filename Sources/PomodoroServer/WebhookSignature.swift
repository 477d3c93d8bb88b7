import CCrypto

/// The `json` format's signature (docs/PROTOCOL.md, "Verifying a webhook"): HMAC-SHA256 with the webhook's
/// secret over `<timestamp>.<body>`, sent as `Pomodoro-Signature: t=<timestamp>,v1=<hex>`.
enum WebhookSignature {
    static func header(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        "t=\(timestamp),v1=" + hex(hmacSHA256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + body))
    }

    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &digest, &length)
        return Array(digest.prefix(Int(length)))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// A new webhook's secret: "whsec_" and 32 bytes from the system's secure random source, in hex.
    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return "whsec_" + hex((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// A new event's id: "evt_" and 16 random bytes in hex.
    static func newEventID() -> String {
        var generator = SystemRandomNumberGenerator()
        return "evt_" + hex((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
