/// A key press, decoded from the bytes a terminal sends in raw mode.
public enum Key: Hashable, Sendable {
    case character(Character)
    case enter, backspace, delete, escape, tab
    case left, right, up, down, home, end
    /// Ctrl plus a letter, lowercased ("c" for Ctrl-C).
    case control(Character)
    case unknown
}

/// Turns raw terminal input into keys: UTF-8 text, control bytes and the common escape sequences.
///
/// Terminals send one key's sequence in one write, so a lone ESC at the end of a read is the Escape key;
/// a sequence cut across reads is rare enough to read as Escape and some characters.
public struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    public mutating func decode(_ bytes: [UInt8]) -> [Key] {
        var input = pending + bytes
        pending = []
        var keys: [Key] = []
        var i = 0
        while i < input.count {
            let b = input[i]
            switch b {
            case 0x1B:
                let (key, used) = Self.escape(Array(input[(i + 1)...]))
                keys.append(key)
                i += 1 + used
            case 0x0D, 0x0A: keys.append(.enter); i += 1
            case 0x7F, 0x08: keys.append(.backspace); i += 1
            case 0x09: keys.append(.tab); i += 1
            case 0x01...0x1A:
                keys.append(.control(Character(Unicode.Scalar(b + 0x60))))
                i += 1
            case 0x00, 0x1C...0x1F: keys.append(.unknown); i += 1
            default:
                let length = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
                if i + length > input.count {
                    pending = Array(input[i...])  // the rest of this character comes in the next read
                    i = input.count
                    break
                }
                let text = String(decoding: input[i..<(i + length)], as: UTF8.self)
                keys.append(text.first.map(Key.character) ?? .unknown)
                i += length
            }
        }
        input.removeAll()
        return keys
    }

    /// Decodes what follows an ESC: returns the key and how many bytes after the ESC it used.
    private static func escape(_ rest: [UInt8]) -> (Key, Int) {
        guard let first = rest.first else { return (.escape, 0) }
        guard first == UInt8(ascii: "[") || first == UInt8(ascii: "O") else {
            return first == 0x1B ? (.escape, 0) : (.escape, 0)
        }
        // CSI or SS3: parameters (digits, ';') then one final byte.
        var j = 1
        while j < rest.count, (0x30...0x3F).contains(rest[j]) { j += 1 }
        guard j < rest.count else { return (.escape, 0) }
        let params = String(decoding: rest[1..<j], as: UTF8.self)
        let key: Key
        switch rest[j] {
        case UInt8(ascii: "A"): key = .up
        case UInt8(ascii: "B"): key = .down
        case UInt8(ascii: "C"): key = .right
        case UInt8(ascii: "D"): key = .left
        case UInt8(ascii: "H"): key = .home
        case UInt8(ascii: "F"): key = .end
        case UInt8(ascii: "~"):
            switch params {
            case "1", "7": key = .home
            case "4", "8": key = .end
            case "3": key = .delete
            default: key = .unknown
            }
        default: key = .unknown
        }
        return (key, j + 1)
    }
}

/// A one-line text editor: insert, delete, move, submit. Works on characters (grapheme clusters).
public struct LineEditor: Hashable, Sendable {
    public private(set) var characters: [Character]
    /// Insertion point, 0...characters.count.
    public private(set) var cursor: Int
    public let limit: Int

    public init(_ text: String = "", limit: Int = 200) {
        characters = Array(text.prefix(limit))
        cursor = characters.count
        self.limit = limit
    }

    public var text: String { String(characters) }

    public enum Outcome: Equatable, Sendable {
        case editing
        case submitted(String)
        case cancelled
    }

    /// Applies one key.
    public mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .enter: return .submitted(text)
        case .escape, .control("c"), .control("g"): return .cancelled
        case .character(let c):
            guard characters.count < limit, !c.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else { return .editing }
            characters.insert(c, at: cursor)
            cursor += 1
        case .backspace, .control("h"):
            if cursor > 0 {
                characters.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete, .control("d"):
            if cursor < characters.count { characters.remove(at: cursor) }
        case .left, .control("b"): cursor = max(0, cursor - 1)
        case .right, .control("f"): cursor = min(characters.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = characters.count
        case .control("u"):
            characters.removeSubrange(0..<cursor)
            cursor = 0
        case .control("k"):
            characters.removeSubrange(cursor...)
        case .control("w"):
            var start = cursor
            while start > 0, characters[start - 1] == " " { start -= 1 }
            while start > 0, characters[start - 1] != " " { start -= 1 }
            characters.removeSubrange(start..<cursor)
            cursor = start
        default: break
        }
        return .editing
    }
}
