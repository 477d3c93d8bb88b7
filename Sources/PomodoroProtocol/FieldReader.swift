/// Reads the fields of one JSON object, naming the field in every error and carrying the request's ref.
struct FieldReader {
    let node: JSONNode
    /// Where this object sits in the message ("" for the top level).
    let path: String
    let ref: Ref?

    init(_ node: JSONNode, path: String, ref: Ref?) {
        self.node = node
        self.path = path
        self.ref = ref
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func failure(_ key: String, _ message: String) -> ProtocolError {
        ProtocolError(.badRequest, message, field: name(key), ref: ref)
    }

    /// The value of a required field (present and not null).
    func value(_ key: String, _ expected: String) throws(ProtocolError) -> JSONNode {
        guard let value = node[key] else { throw failure(key, "missing field '\(name(key))'") }
        guard !value.isNull else { throw failure(key, "'\(name(key))' must be \(expected), not null") }
        return value
    }

    /// The value of an optional field: absent and null both mean none.
    func optionalValue(_ key: String) -> JSONNode? {
        guard let value = node[key], !value.isNull else { return nil }
        return value
    }

    func type() throws(ProtocolError) -> String {
        guard let type = try value("type", "a string").string else {
            throw failure("type", "'type' must be a string")
        }
        return type
    }

    func string(_ key: String) throws(ProtocolError) -> String {
        guard let s = try value(key, "a string").string else { throw failure(key, "'\(name(key))' must be a string") }
        return s
    }

    func optionalString(_ key: String) throws(ProtocolError) -> String? {
        guard let value = optionalValue(key) else { return nil }
        guard let s = value.string else { throw failure(key, "'\(name(key))' must be a string") }
        return s
    }

    func bool(_ key: String) throws(ProtocolError) -> Bool {
        guard let b = try value(key, "true or false").bool else {
            throw failure(key, "'\(name(key))' must be true or false")
        }
        return b
    }

    func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
        optionalValue(key) == nil ? nil : try bool(key)
    }

    func int64(_ key: String) throws(ProtocolError) -> Int64 {
        switch try value(key, "an integer").integer {
        case .signed(let n)?: return n
        case .unsigned?, .outOfRange?: throw failure(key, "'\(name(key))' is out of range")
        case nil: throw failure(key, "'\(name(key))' must be an integer")
        }
    }

    func int(_ key: String) throws(ProtocolError) -> Int {
        guard let n = Int(exactly: try int64(key)) else { throw failure(key, "'\(name(key))' is out of range") }
        return n
    }

    func optionalInt(_ key: String) throws(ProtocolError) -> Int? {
        optionalValue(key) == nil ? nil : try int(key)
    }

    func optionalInt64(_ key: String) throws(ProtocolError) -> Int64? {
        optionalValue(key) == nil ? nil : try int64(key)
    }

    func uint64(_ key: String) throws(ProtocolError) -> UInt64 {
        switch try value(key, "an integer").integer {
        case .signed(let n)? where n >= 0: return UInt64(n)
        case .unsigned(let n)?: return n
        case .signed?, .outOfRange?: throw failure(key, "'\(name(key))' is out of range")
        case nil: throw failure(key, "'\(name(key))' must be an integer")
        }
    }

    func enumeration<E: RawRepresentable<String>>(_ key: String) throws(ProtocolError) -> E {
        guard let value = E(rawValue: try string(key)) else {
            throw failure(key, "'\(name(key))' has an unknown value")
        }
        return value
    }

    func optionalEnumeration<E: RawRepresentable<String>>(_ key: String) throws(ProtocolError) -> E? {
        guard let raw = try optionalString(key) else { return nil }
        guard let value = E(rawValue: raw) else { throw failure(key, "'\(name(key))' has an unknown value") }
        return value
    }

    func object(_ key: String) throws(ProtocolError) -> FieldReader {
        let value = try value(key, "an object")
        guard value.kind == .object else { throw failure(key, "'\(name(key))' must be an object") }
        return FieldReader(value, path: name(key), ref: ref)
    }

    func optionalObject(_ key: String) throws(ProtocolError) -> FieldReader? {
        guard let value = optionalValue(key) else { return nil }
        guard value.kind == .object else { throw failure(key, "'\(name(key))' must be an object") }
        return FieldReader(value, path: name(key), ref: ref)
    }

    /// The objects of an array field, each with its own path (`members[2]`).
    func objects(_ key: String) throws(ProtocolError) -> [FieldReader] {
        let value = try value(key, "an array")
        guard value.kind == .array else { throw failure(key, "'\(name(key))' must be an array") }
        var readers: [FieldReader] = []
        readers.reserveCapacity(value.count)
        for (index, element) in value.elements.enumerated() {
            let elementName = "\(name(key))[\(index)]"
            guard element.kind == .object else {
                throw ProtocolError(.badRequest, "'\(elementName)' must be an object", field: elementName, ref: ref)
            }
            readers.append(FieldReader(element, path: elementName, ref: ref))
        }
        return readers
    }
}
