/// A control-API request on the bus (docs/CLUSTER.md, "The control API on a cluster"): the node that
/// received `POST /api/rooms/<room>/commands`, `GET /api/rooms/<room>` or `GET /api/rooms/<room>/events` for a
/// room another node runs sends it to that node, which answers it as its own and sends the HTTP answer back
/// (an event stream: piece by piece, then its end).
///
/// Text form (after `BusMessage`'s version):
/// ```
/// v1 api NODE NUMBER ROOM TOKENHASH\n{"type":"start","ref":"r1"}
/// v1 apiread NODE NUMBER ROOM\nADDRESS\nBEARER
/// v1 apianswer NODE NUMBER STATUS[ FROM]\nCONTENT-TYPE\nNAME: VALUE\n…\n\n{"type":"ok","command":"start"}
/// v1 apiwatch NODE NUMBER ROOM\nADDRESS\nBEARER
/// v1 apistream NODE NUMBER FROM\nevent: state\nid: 7\ndata: {…}\n\n
/// v1 apistreamend NODE NUMBER FROM
/// v1 apiunwatch NODE NUMBER
/// ```
/// `NODE` is the node that received the request (the one that waits for the answer) and `NUMBER` its count
/// of such requests. The token goes as its SHA-256 (the form the room keeps), never as sent. The body is
/// the request's, byte for byte. A read carries the client's address (for the owner's passcode gate) and
/// its Bearer credential as sent (empty: none), which the owner judges as it judges an observer's; a watch
/// (an event stream) carries the same. The owner answers a watch it refuses with `apianswer`; one it lets in
/// with the stream's pieces (`apistream`, to NODE: the bytes to write, the first opens the answer) until
/// `apistreamend`. `apiunwatch` (to the owner) says the reader at NODE is gone.
public enum ControlAPIBusMessage: Equatable, Sendable {
    case command(from: String, number: UInt64, room: String, tokenHash: String, body: String)
    case read(from: String, number: UInt64, room: String, address: String, bearer: String)
    case answer(to: String, number: UInt64, status: Int, contentType: String, headers: [Header], body: String,
                from: String)
    case watch(from: String, number: UInt64, room: String, address: String, bearer: String)
    case streamed(to: String, number: UInt64, piece: String, from: String)
    case streamEnded(to: String, number: UInt64, from: String)
    case unwatch(from: String, number: UInt64)

    public struct Header: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    static let kinds: Set<String> = ["api", "apiread", "apianswer", "apiwatch", "apistream", "apistreamend", "apiunwatch"]

    var encoded: String {
        switch self {
        case let .command(from, number, room, tokenHash, body):
            return "api \(from) \(number) \(room) \(tokenHash)\n\(body)"
        case let .read(from, number, room, address, bearer):
            return "apiread \(from) \(number) \(room)\n\(address)\n\(bearer)"
        case let .answer(to, number, status, contentType, headers, body, from):
            let lines = headers.map { "\($0.name): \($0.value)\n" }.joined()
            return "apianswer \(to) \(number) \(status)\(from.isEmpty ? "" : " \(from)")\n\(contentType)\n\(lines)\n\(body)"
        case let .watch(from, number, room, address, bearer):
            return "apiwatch \(from) \(number) \(room)\n\(address)\n\(bearer)"
        case let .streamed(to, number, piece, from):
            return "apistream \(to) \(number) \(from)\n\(piece)"
        case let .streamEnded(to, number, from):
            return "apistreamend \(to) \(number) \(from)\n"
        case let .unwatch(from, number):
            return "apiunwatch \(from) \(number)\n"
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
        case "apiread", "apiwatch":
            let kind = header[0]
            guard header.count == 4 else { throw BusMessage.Malformed(description: "\(kind) needs 3 fields") }
            let lines = body.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            guard lines.count == 2 else { throw BusMessage.Malformed(description: "\(kind) needs an address and a credential") }
            let (from, asked, room) = (header[1], try number(header[2]), header[3])
            let (address, bearer) = (String(lines[0]), String(lines[1]))
            self = kind == "apiread" ? .read(from: from, number: asked, room: room, address: address, bearer: bearer)
                                     : .watch(from: from, number: asked, room: room, address: address, bearer: bearer)
        case "apistream":
            guard header.count == 4, !body.isEmpty else { throw BusMessage.Malformed(description: "apistream needs 3 fields and a piece") }
            self = .streamed(to: header[1], number: try number(header[2]), piece: body, from: header[3])
        case "apistreamend":
            guard header.count == 4 else { throw BusMessage.Malformed(description: "apistreamend needs 3 fields") }
            self = .streamEnded(to: header[1], number: try number(header[2]), from: header[3])
        case "apiunwatch":
            guard header.count == 3 else { throw BusMessage.Malformed(description: "apiunwatch needs 2 fields") }
            self = .unwatch(from: header[1], number: try number(header[2]))
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
