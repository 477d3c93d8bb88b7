#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// One JSON object per line: `timestamp` (ISO 8601, UTC, milliseconds), `level`, `label`, `message`, then the
/// structured metadata as fields of their own (sorted by key), for journald or a log shipper. A metadata key
/// that would overwrite one of the first four is written as `metadata.<key>`.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    private let label: String
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> timespec

    /// - Parameters:
    ///   - write: receives each line, newline included; standard error by default.
    ///   - now: the wall clock (a test passes a fixed one).
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil,
                write: @escaping @Sendable (String) -> Void = JSONLogHandler.writeToStandardError,
                now: @escaping @Sendable () -> timespec = JSONLogHandler.wallClock) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
        self.now = now
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { $1 } }
        if let given = event.metadata { fields.merge(given) { $1 } }
        if let error = event.error { fields["error"] = .string("\(error)") }

        var line = "{\"timestamp\":\(Self.quoted(Self.iso8601(now())))"
        line += ",\"level\":\(Self.quoted(event.level.rawValue))"
        line += ",\"label\":\(Self.quoted(label))"
        line += ",\"message\":\(Self.quoted(event.message.description))"
        for key in fields.keys.sorted() {
            let name = ["timestamp", "level", "label", "message"].contains(key) ? "metadata.\(key)" : key
            line += ",\(Self.quoted(name)):\(Self.json(fields[key]!))"
        }
        write(line + "}\n")
    }

    static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): quoted(text)
        case .stringConvertible(let convertible): quoted(convertible.description)
        case .array(let values): "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let fields):
            "{" + fields.keys.sorted().map { "\(quoted($0)):\(json(fields[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `2025-01-31T12:34:56.789Z`.
    static func iso8601(_ time: timespec) -> String {
        var seconds = time_t(time.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = Int(time.tv_nsec) / 1_000_000
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }

    public static let wallClock: @Sendable () -> timespec = {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time
    }

    /// One write(2) per line, so that lines from different threads never interleave.
    public static let writeToStandardError: @Sendable (String) -> Void = { line in
        var bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { writeToDescriptor(2, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 { if errno == EINTR { continue } else { return } }
            offset += written
        }
    }
}

/// write(2), under a name the handler's own `write` property does not hide.
private func writeToDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
