// swift-tools-version:6.1
// The fuzz target for the client-frame decoder, kept in its own package because it is only built with
// `-sanitize=fuzzer` (libFuzzer supplies `main`). Run it with `make fuzz` from the repository root.
import PackageDescription

let package = Package(
    name: "PomodoroFuzz",
    dependencies: [.package(name: "Pomodoro", path: "../..")],
    targets: [
        .executableTarget(name: "DecoderFuzzer",
                          dependencies: [.product(name: "PomodoroProtocol", package: "Pomodoro")],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
