import PomodoroProtocol

/// libFuzzer's entry point: every input must decode to a frame or to a `ProtocolError`, never crash, and a
/// decoded frame must survive a round trip through the encoder unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let frame = try? WireCodec.decodeClientFrame(bytes) else { return 0 }
    let again = try? WireCodec.decodeClientFrame(WireCodec.encode(frame))
    precondition(again == frame, "a decoded frame did not survive encoding: \(frame)")
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

/// SwiftPM links an executable's entry point as `<module>_main`; hand it straight to libFuzzer's driver.
@_cdecl("DecoderFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzz(data, size) }
}
