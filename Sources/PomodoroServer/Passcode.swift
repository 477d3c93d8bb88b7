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
