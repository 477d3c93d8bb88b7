import CLibWebSockets

/// An encoded text message ready to be written to any number of connections.
///
/// The payload sits behind the headroom libwebsockets needs, so one frame is built once per broadcast and
/// the same bytes go to every member. libwebsockets writes the frame header into that headroom on each
/// write; a server's headers for one payload are identical and all writes happen on the service thread,
/// so sharing is safe.
/// A class rather than a loop-bound value: it is built on any thread, and a check on every write would cost
/// the tick path.
public final class OutboundFrame: @unchecked Sendable {  // safe: once built, only the service thread writes `storage` (header bytes in the headroom)
    var storage: [UInt8]
    public var count: Int { storage.count - LWS.pre }

    /// One allocation: the headroom zeroed and the payload copied behind it.
    public init(_ payload: [UInt8]) {
        let pre = LWS.pre
        storage = [UInt8](unsafeUninitializedCapacity: pre + payload.count) { buffer, initialized in
            buffer.baseAddress!.initialize(repeating: 0, count: pre)
            payload.withUnsafeBufferPointer { bytes in
                if let base = bytes.baseAddress { (buffer.baseAddress! + pre).initialize(from: base, count: bytes.count) }
            }
            initialized = pre + payload.count
        }
    }

    public convenience init(_ text: String) { self.init(Array(text.utf8)) }

    public var payload: ArraySlice<UInt8> { storage[LWS.pre...] }

    /// The whole frame as a server sends it (FIN, text, unmasked, the payload's length, the payload), its
    /// header written into the headroom: the same bytes for every connection, for writing them directly.
    /// Service thread only, like every write of the headroom.
    func withWireBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        let length = count
        var header: [UInt8] = [0x81]
        if length < 126 {
            header.append(UInt8(length))
        } else if length <= 0xFFFF {
            header += [126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            header.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { header.append(UInt8((UInt64(length) >> UInt64(shift)) & 0xFF)) }
        }
        let start = LWS.pre - header.count
        return storage.withUnsafeMutableBytes { buffer in
            for (offset, byte) in header.enumerated() { buffer[start + offset] = byte }
            return body(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }
}

/// How a received message went wrong before it reached the application.
public enum ReceiveProblem: Equatable, Sendable {
    /// The message was larger than the configured maximum; it was discarded.
    case tooLarge(limit: Int)
    /// A binary message; it was discarded.
    case binary
}

/// Reassembles fragmented messages, enforcing a maximum size.
struct MessageAssembler {
    let limit: Int
    private(set) var buffer: [UInt8] = []
    private var overflowed = false
    private var binary = false

    init(limit: Int) { self.limit = limit }

    enum Result {
        case incomplete
        case text([UInt8])
        case problem(ReceiveProblem)
    }

    mutating func append(_ chunk: UnsafeRawBufferPointer, first: Bool, final: Bool, isBinary: Bool) -> Result {
        if first {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 4096)
            overflowed = false
            binary = isBinary
        }
        if !overflowed && !binary {
            if buffer.count + chunk.count > limit {
                overflowed = true
                buffer.removeAll()
            } else {
                buffer.append(contentsOf: chunk)
            }
        }
        guard final else { return .incomplete }
        if binary { return .problem(.binary) }
        if overflowed { return .problem(.tooLarge(limit: limit)) }
        let message = buffer
        buffer.removeAll(keepingCapacity: buffer.capacity <= 4096)
        return .text(message)
    }
}

/// A bounded queue of frames waiting for a connection to become writable.
struct OutboundQueue {
    let maxFrames: Int
    let maxBytes: Int
    private var frames: [OutboundFrame] = []
    private var head = 0
    private(set) var bytes = 0

    init(maxFrames: Int, maxBytes: Int) {
        self.maxFrames = maxFrames
        self.maxBytes = maxBytes
    }

    var isEmpty: Bool { head == frames.count }
    var count: Int { frames.count - head }

    /// Adds a frame; false when the queue is full (the connection cannot keep up).
    mutating func push(_ frame: OutboundFrame) -> Bool {
        guard count < maxFrames, bytes + frame.count <= maxBytes else { return false }
        frames.append(frame)
        bytes += frame.count
        return true
    }

    mutating func pop() -> OutboundFrame? {
        guard head < frames.count else { return nil }
        let frame = frames[head]
        head += 1
        bytes -= frame.count
        if head == frames.count {
            frames.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 && head * 2 > frames.count {
            frames.removeFirst(head)
            head = 0
        }
        return frame
    }

    mutating func removeAll() {
        frames.removeAll()
        head = 0
        bytes = 0
    }
}
