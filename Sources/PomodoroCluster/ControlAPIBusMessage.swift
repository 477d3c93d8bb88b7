/// A control-API request on the bus (docs/CLUSTER.md, "The control API on a cluster"): the node that
/// received `POST /api/rooms/<room>/commands`, or `GET /api/rooms/<room>`, for a room another node runs
/// sends it to that node, which answers it as its own and sends the HTTP answer back.
///
/// Text form (after `BusMessage`'s version):
/// ```
/// v1 api NODE NUMBER ROOM TOKENHASH\n{"type":"start","ref":"r1"}
/// v1 apiread NODE NUMBER ROOM\nADDRESS\nBEARER
/// v1 apianswer NODE NUMBER STATUS[ FROM]\nCONTENT-TYPE\nNAME: VALUE\n…\n\n{"type":"ok","command":"start"}
/// ```
/// `NODE` is the node that received the request (the one that waits for the answer) and `NUMBER` its count
/// of such requests. The token goes as its SHA-256 (the form the room keeps), never as sent. The body is
/// the request's, byte for byte. A read carries the client's address (for the owner's passcode gate) and
/// its Bearer credential as sent (empty: none), which the owner judges as it judges an observer's.
public enum ControlAPIBusMessage: Equatable, Sendable {
    case command(from: String, number: UInt64, room: String, tokenHash: String, body: String)
    case read(from: String, number: UInt64, room: String, address: String, bearer: String)
    case answer(to: String, number: UInt64, status: Int, contentType: String, headers: [Header], body: String,
                from: String)

    public struct Header: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    static let kinds: Set<String> = ["api", "apiread", "apianswer"]

    var encoded: String {
        switch self {
        case let .command(from, number, room, tokenHash, body):
            return "api \(from) \(number) \(room) \(tokenHash)\n\(body)"
        case let .read(from, number, room, address, bearer):
            return "apiread \(from) \(number) \(room)\n\(address)\n\(bearer)"
        case let .answer(to, number, status, contentType, headers, body, from):
            let lines = headers.map { "\($0.name): \($0.value)\n" }.joined()
            return "apianswer \(to) \(number) \(status)\(from.isEmpty ? "" : " \(from)")\n\(contentType)\n\(lines)\n\(body)"
        }
    }

    /// Reads the header fields after the version (`header[0]` is the kind) and the body.
    init(header: [String], body: String) throws(BusMessage.Malformed) {
        func number(_ text: String) throws(BusMessage.Malformed) -> UInt64 {
            guard let number = UInt64(text) else { throw BusMessage.Malformed(description: "not a request number: \(text.prefix(40))") }
            return number
        }
        guard header.allSatisfy({ !$0.isEmpty }) else { throw BusMessage.Malformed(description: "an empty field") }
        switch header.first {
        case "api":
            guard header.count == 5 else { throw BusMessage.Malformed(description: "api needs 4 fields") }
            self = .command(from: header[1], number: try number(header[2]), room: header[3], tokenHash: header[4], body: body)
        case "apiread":
            guard header.count == 4 else { throw BusMessage.Malformed(description: "apiread needs 3 fields") }
            let lines = body.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            guard lines.count == 2 else { throw BusMessage.Malformed(description: "apiread needs an address and a credential") }
            self = .read(from: header[1], number: try number(header[2]), room: header[3], address: String(lines[0]),
                         bearer: String(lines[1]))
        case "apianswer":
            guard header.count == 4 || header.count == 5, let status = Int(header[3]), (100...599).contains(status) else {
                throw BusMessage.Malformed(description: "apianswer needs a node, a number and a status")
            }
            var rest = body[...]
            var lines: [String] = []
            while let newline = rest.firstIndex(of: "\n") {
                let line = String(rest[..<newline])
                rest = rest[rest.index(after: newline)...]
                if line.isEmpty, !lines.isEmpty { break }
                lines.append(line)
            }
            guard let contentType = lines.first else { throw BusMessage.Malformed(description: "apianswer without a content type") }
            var headers: [Header] = []
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { throw BusMessage.Malformed(description: "not a header line") }
                headers.append(Header(name: String(line[..<colon]),
                                      value: String(line[line.index(after: colon)...].drop { $0 == " " })))
            }
            self = .answer(to: header[1], number: try number(header[2]), status: status, contentType: contentType,
                           headers: headers, body: String(rest), from: header.count == 5 ? header[4] : "")
        default:
            throw BusMessage.Malformed(description: "not a control-API message")
        }
    }
}
