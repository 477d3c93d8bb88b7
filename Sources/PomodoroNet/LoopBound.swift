/// Whatever can tell whether the calling thread is its loop's service thread: every `ServiceLoop`, and a
/// test's stand-in for one.
public protocol LoopThread: AnyObject, Sendable {
    /// Whether the calling thread is the one the loop's state belongs to.
    var isOnServiceThread: Bool { get }
}

extension ServiceLoop: LoopThread {}

/// A value that belongs to one loop's service thread (as swift-nio's `NIOLoopBound`): it may be handed to
/// any thread, inside work posted back to the loop, but it is reached only on the loop's thread, which debug
/// builds check on every access. So state "for the service thread only" says so in its type, and a slip
/// stops a debug build at the line that made it instead of racing.
///
/// The one unchecked hole for the service threads' state: everything confined to a loop goes through here.
public struct LoopBound<Value>: @unchecked Sendable {  // safe: `stored` is reached only on `loop`'s thread (asserted in debug builds)
    private let stored: Value
    /// The loop whose thread alone may reach the value.
    public let loop: any LoopThread

    public init(_ value: Value, loop: any LoopThread) {
        stored = value
        self.loop = loop
    }

    /// The value; on the loop's thread only.
    public var value: Value {
        assert(loop.isOnServiceThread, "reached \(Value.self) off its loop's thread")
        return stored
    }
}

/// A variable that belongs to one loop's service thread: `LoopBound` for state that changes (a cell the
/// loop's thread alone reads and writes, through `LoopBound`'s check).
public final class LoopBoundBox<Value>: Sendable {
    private final class Cell {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private let cell: LoopBound<Cell>
    public var loop: any LoopThread { cell.loop }

    public init(_ value: Value, loop: any LoopThread) {
        cell = LoopBound(Cell(value), loop: loop)
    }

    /// The value; on the loop's thread only.
    public var value: Value {
        get { cell.value.value }
        set { cell.value.value = newValue }
    }
}
