import CCrypto
import Logging
import PomodoroCore

/// A room's passcode as the server keeps it: a random salt and a slow salted hash (PBKDF2-HMAC-SHA256),
/// never the passcode itself. This file is the only Swift code that touches OpenSSL's libcrypto.
///
/// Making and checking one takes a few tenths of a second of CPU on purpose, so the hub does both off the
/// service thread.
struct PasscodeVerifier: Sendable {
    /// What a stored verifier holds.
    enum Form: Sendable, Equatable {
        /// PBKDF2-HMAC-SHA256 with these parameters.
        case pbkdf2(iterations: Int32, salt: [UInt8], hash: [UInt8])
        /// A stored value this server cannot read (damaged, or written by a newer version with parameters
        /// out of `readableIterations`). It matches no passcode: the room stays locked, open only to its
        /// members' resume tokens. `encoded` gives the stored text back unchanged.
        case unreadable(String)
    }

    let form: Form

    /// The work factor of new hashes: OWASP's 2023 guidance for PBKDF2-HMAC-SHA256. Hashes made with an
    /// older count still verify (the count is read from the stored text) and are made again with this one
    /// on their next successful check.
    static let iterations: Int32 = 600_000
    /// The counts a stored hash may have: down to the 100,000 of earlier versions of this server; up to
    /// where one check would hold the (serial) passcode queue for seconds.
    static let readableIterations: ClosedRange<Int32> = 100_000...10_000_000
    static let allowedLength = 4...64

    /// Hashes a new passcode with a fresh 16-byte salt from the system's secure random source (with another
    /// work factor only in tests of hashes that older versions wrote).
    init(passcode: String, iterations: Int32 = Self.iterations) {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        form = .pbkdf2(iterations: iterations, salt: salt, hash: Self.derive(passcode, salt: salt, iterations: iterations))
    }

    /// The form a store keeps: `pbkdf2-sha256$ITERATIONS$SALT$HASH`, salt and hash in hex.
    var encoded: String {
        switch form {
        case let .pbkdf2(iterations, salt, hash): "pbkdf2-sha256$\(iterations)$\(Self.hex(salt))$\(Self.hex(hash))"
        case .unreadable(let stored): stored
        }
    }

    /// A verifier read back from a store. Never "no lock": a stored value that does not parse is
    /// `.unreadable` and matches nothing.
    init(encoded: String) {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "pbkdf2-sha256",
              parts[1].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let iterations = Int32(parts[1]), Self.readableIterations.contains(iterations),
              let salt = Self.bytes(fromHex: parts[2]), let hash = Self.bytes(fromHex: parts[3]),
              (1...64).contains(salt.count), hash.count == 32 else {
            form = .unreadable(encoded)
            return
        }
        form = .pbkdf2(iterations: iterations, salt: salt, hash: hash)
    }

    /// Whether this verifier can match any passcode at all.
    var isReadable: Bool {
        if case .unreadable = form { false } else { true }
    }

    /// The lock a room's stored passcode column stands for: none for NULL, otherwise a verifier, logged as
    /// an error when it cannot be read (the room then opens to its members' resume tokens alone).
    static func lock(stored: String?, room: RoomID, logger: Logger) -> PasscodeVerifier? {
        guard let stored else { return nil }
        let verifier = PasscodeVerifier(encoded: stored)
        if !verifier.isReadable {
            logger.error("room's stored passcode hash cannot be read: the room refuses every passcode",
                         metadata: ["room": "\(room)"])
        }
        return verifier
    }

    /// The answer of `check(_:)`.
    enum Check: Sendable {
        case wrong
        /// Right; `upgraded` is the passcode hashed anew with the current parameters when the stored hash
        /// had older ones.
        case right(upgraded: PasscodeVerifier?)
    }

    /// Checks `passcode` (in constant time) and, when it is right but hashed with another work factor than
    /// `workFactor` (the server's, `ServerConfiguration.passcodeIterations`), hashes it again with that one.
    /// Slow on purpose: never on the service thread.
    func check(_ passcode: String, workFactor: Int32) -> Check {
        guard case let .pbkdf2(iterations, salt, hash) = form else { return .wrong }
        let candidate = Self.derive(passcode, salt: salt, iterations: iterations)
        guard CRYPTO_memcmp(candidate, hash, hash.count) == 0 else { return .wrong }
        return .right(upgraded: iterations == workFactor ? nil : PasscodeVerifier(passcode: passcode, iterations: workFactor))
    }

    /// Whether `passcode` is the one this verifier was made from, compared in constant time.
    func matches(_ passcode: String) -> Bool {
        if case .right = check(passcode, workFactor: Self.iterations) { true } else { false }
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

    private static func derive(_ passcode: String, salt: [UInt8], iterations: Int32) -> [UInt8] {
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
