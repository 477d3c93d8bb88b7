// swift-tools-version:6.1
// The fuzz targets (the client-frame decoder; the bus between cluster nodes and the relay), kept in their own
// package because they are only built with `-sanitize=fuzzer` (libFuzzer supplies `main`). Run them with
// `make fuzz` from the repository root.
import PackageDescription

let package = Package(
    name: "PomodoroFuzz",
    dependencies: [.package(name: "Pomodoro", path: "../..")],
    targets: [
        .executableTarget(name: "DecoderFuzzer",
                          dependencies: [.product(name: "PomodoroProtocol", package: "Pomodoro")],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        // Sources/BusFuzzer/BusMessage.swift and ControlAPIBusMessage.swift link to Sources/PomodoroCluster/.
        .executableTarget(name: "BusFuzzer",
                          dependencies: [.product(name: "PomodoroProtocol", package: "Pomodoro")],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
