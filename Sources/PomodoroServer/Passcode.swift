import CCrypto

/// A room's passcode as the server keeps it: a random salt and a slow salted hash (PBKDF2-HMAC-SHA256),
/// never the passcode itself. This file is the only Swift code that touches OpenSSL's libcrypto.
///
/// Making and checking one takes tens of milliseconds on purpose, so the hub does both off the service
/// thread.
struct PasscodeVerifier: Sendable {
    let salt: [UInt8]
    let hash: [UInt8]

    static let iterations: Int32 = 100_000
    static let allowedLength = 4...64

    /// Hashes a new passcode with a fresh 16-byte salt from the system's secure random source.
    init(passcode: String) {
        var generator = SystemRandomNumberGenerator()
        salt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        hash = Self.derive(passcode, salt: salt)
    }

    /// The form a store keeps: `pbkdf2-sha256$ITERATIONS$SALT$HASH`, salt and hash in hex.
    var encoded: String {
        "pbkdf2-sha256$\(Self.iterations)$\(Self.hex(salt))$\(Self.hex(hash))"
    }

    /// A verifier read back from a store; nil for anything this server did not write.
    init?(encoded: String) {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "pbkdf2-sha256", parts[1] == "\(Self.iterations)",
              let salt = Self.bytes(fromHex: parts[2]), let hash = Self.bytes(fromHex: parts[3]),
              !salt.isEmpty, hash.count == 32 else { return nil }
        self.salt = salt
        self.hash = hash
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    private static func bytes(fromHex text: Substring) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var out = [UInt8]()
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let high = nibble(chars[i]), let low = nibble(chars[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    /// Whether `passcode` is the one this verifier was made from, compared in constant time.
    func matches(_ passcode: String) -> Bool {
        let candidate = Self.derive(passcode, salt: salt)
        return CRYPTO_memcmp(candidate, hash, hash.count) == 0
    }

    private static func derive(_ passcode: String, salt: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        let bytes = Array(passcode.utf8)
        let status = bytes.withUnsafeBufferPointer { text in
            text.withMemoryRebound(to: CChar.self) { chars in
                PKCS5_PBKDF2_HMAC(chars.baseAddress, Int32(chars.count), salt, Int32(salt.count), iterations,
                                  EVP_sha256(), Int32(output.count), &output)
            }
        }
        // PBKDF2 fails only when out of memory; an all-zero hash then matches nothing derived successfully.
        precondition(status == 1, "PBKDF2 failed")
        return output
    }
}
