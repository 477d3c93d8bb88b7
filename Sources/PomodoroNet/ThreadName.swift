import Glibc

/// The calling thread's name as the system shows it (`ps -L`, `top -H`, `perf`, debuggers): 15 bytes at most.
///
/// Written to `/proc/thread-self/comm`. Foundation's `Thread.current.name`, set first thing in a thread just
/// started, left it with its maker's name now and then (of 400 threads started from dispatch's threads, 11, 11
/// and 15 in three runs kept "…root.default-qos"), and Glibc does not show `pthread_setname_np`.
public enum ThreadName {
    /// Names the calling thread (cut to 15 bytes). A system without `/proc` keeps the name it had.
    public static func set(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The calling thread's name, or nil where `/proc` cannot tell.
    public static var current: String? {
        let descriptor = open("/proc/thread-self/comm", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        var name = buffer[..<count]
        if name.last == UInt8(ascii: "\n") { name = name.dropLast() }
        return String(decoding: name, as: UTF8.self)
    }
}
