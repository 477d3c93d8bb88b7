// `BusMessage.swift` is the server's own file, linked here: the fuzzer builds the bus's codec without the
// rest of the cluster module (hiredis, libpq).
import PomodoroProtocol

/// libFuzzer's entry point over what crosses the bus between cluster nodes. Each input is read two ways:
/// - as a bus message another node published: it reads as a `BusMessage` or is refused (`Malformed`), never
///   crashes, and one that reads is published again, byte for byte, by its own encoding;
/// - as a member's frame on a relaying node: what the relay lets through (a frame that decodes, as
///   `RoomHub.forward` checks) crosses the bus exactly as sent, and reaches the owner as the same bytes,
///   which decode to the same frame there.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let message = try? BusMessage(decoding: text) {
        let again = try? BusMessage(decoding: message.encoded)
        precondition(again == message, "a bus message did not survive its encoding: \(message)")
    }
    guard let frame = try? WireCodec.decodeClientFrame(bytes) else { return 0 }
    guard let body = String(validating: bytes, as: UTF8.self) else {
        preconditionFailure("a frame that decoded is not UTF-8")
    }
    let remote = BusMessage.RemoteConnection(node: "b", connection: 7)
    let published = BusMessage.frame(from: remote, room: "room", frame: body).encoded
    guard case .frame(let from, "room", let heard)? = try? BusMessage(decoding: published), from == remote else {
        preconditionFailure("a relayed frame did not read back as one")
    }
    precondition(Array(heard.utf8) == bytes, "a relayed frame changed on the bus")
    precondition((try? WireCodec.decodeClientFrame(Array(heard.utf8))) == frame, "the owner read another frame")
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

/// SwiftPM links an executable's entry point as `<module>_main`; hand it straight to libFuzzer's driver.
@_cdecl("BusFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzz(data, size) }
}
