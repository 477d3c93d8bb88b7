// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Pomodoro",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pomodoro-server", targets: ["pomodoro-server"]),
        .executable(name: "pomo", targets: ["pomo"]),
        .executable(name: "pomo-bench", targets: ["pomo-bench"]),
        // For the fuzz target in Tests/Fuzz, a package of its own.
        .library(name: "PomodoroProtocol", targets: ["PomodoroProtocol"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C libraries, each entered through one module map and one shim header.
        .systemLibrary(name: "CLibWebSockets", pkgConfig: "libwebsockets",
                       providers: [.apt(["libwebsockets-dev"])]),
        // The event loop under the service threads: libwebsockets joins a libuv loop that we own (epoll).
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv",
                       providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CJSONC", pkgConfig: "json-c",
                       providers: [.apt(["libjson-c-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis",
                       providers: [.apt(["libhiredis-dev"])]),
        // Webhook deliveries over HTTP(S) (Sources/PomodoroServer/WebhookHTTP.swift).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),

        // The pure domain: rooms, phases, deadlines, members, stats. No I/O, no clock reads.
        .target(name: "PomodoroCore", swiftSettings: strict),
        // Wire messages and their JSON codec (the only code that touches json-c).
        .target(name: "PomodoroProtocol", dependencies: ["PomodoroCore", "CJSONC"], swiftSettings: strict),
        // The thin layer over libwebsockets: service thread, timers, server and client sockets.
        .target(name: "PomodoroNet", dependencies: ["CLibWebSockets", "CLibUV"],
                swiftSettings: strict),
        // What every store shares, without a database library: the `RoomStore` interface, the writer queue,
        // the journal's reports and totals, and the schema's tables with the one codec from rows to records
        // that each SQL store adapts to its own rows.
        .target(name: "PomodoroStore", dependencies: ["PomodoroCore"], swiftSettings: strict),
        // The SQLite RoomStore through GRDB: its connections, migrations and SQL dialect (the only code that
        // knows SQLite or GRDB).
        .target(name: "PomodoroSQLite",
                dependencies: ["PomodoroStore", "PomodoroCore", .product(name: "GRDB", package: "GRDB.swift")],
                swiftSettings: strict),
        // PostgreSQL through libpq: one connection type, the only code that touches libpq, and the
        // PostgreSQL RoomStore built on it.
        .target(name: "PomodoroPostgres", dependencies: ["CPostgres", "PomodoroStore", "PomodoroCore"],
                swiftSettings: strict),
        // The application: room registry, connections, broadcasts; the composition root. Where rooms run is
        // behind its `RoomRouter`: in this process, or on a cluster (PomodoroCluster, wired in by the
        // configuration).
        .target(name: "PomodoroServer",
                dependencies: ["PomodoroCore", "PomodoroProtocol", "PomodoroNet", "PomodoroStore", "PomodoroSQLite",
                               "PomodoroPostgres", "CCrypto", "CCurl",
                               .product(name: "Logging", package: "swift-log"),
                               .product(name: "Prometheus", package: "swift-prometheus")],
                swiftSettings: strict),
        // A cluster of servers (docs/CLUSTER.md): the hub's `RoomRouter` for a node of one. Redis through
        // hiredis (one connection type, the only code that touches hiredis), rooms' leases and epochs, the
        // fenced store, the bus and the relay of members to the node that runs their room.
        .target(name: "PomodoroCluster",
                dependencies: ["CHiredis", "PomodoroCore", "PomodoroStore", "PomodoroServer", "PomodoroNet",
                               "PomodoroProtocol", .product(name: "Logging", package: "swift-log")],
                swiftSettings: strict),
        // The server's command line, environment and config file merged into one configuration; JSON logs;
        // the run loop. A library so that the tests reach it; the executable is a thin @main.
        .target(name: "PomodoroServerCLI",
                dependencies: ["PomodoroServer", "PomodoroCore", "PomodoroNet", "PomodoroStore", "PomodoroCluster",
                               // `backup` and `restore` (BackupMain.swift), through SQLiteBackup.
                               "PomodoroSQLite",
                               .product(name: "ArgumentParser", package: "swift-argument-parser"),
                               .product(name: "Logging", package: "swift-log")],
                swiftSettings: strict),
        .executableTarget(name: "pomodoro-server",
                          dependencies: ["PomodoroServerCLI",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          swiftSettings: strict),
        // The terminal client's reusable parts: the room session (join, resume, reconnect), the room model,
        // and the pure presentation (screen frames, keys, status formats). No terminal I/O here.
        .target(name: "PomodoroClient",
                dependencies: ["PomodoroProtocol", "PomodoroNet", "PomodoroCore"],
                swiftSettings: strict),
        // `pomo`, the terminal client: options, raw terminal, signals, and the loops that drive PomodoroClient.
        .executableTarget(name: "pomo",
                          dependencies: ["PomodoroClient",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          swiftSettings: strict),
        // The load generator's pure parts: the plan, a simulated member, tick accounting, percentiles,
        // /proc parsing and the report. No sockets, no clock reads.
        .target(name: "PomodoroBench", dependencies: ["PomodoroProtocol", "PomodoroCore"], swiftSettings: strict),
        // `pomo-bench`, the load generator (docs/PERFORMANCE.md): options, client threads, the run's stages.
        .executableTarget(name: "pomo-bench",
                          dependencies: ["PomodoroBench", "PomodoroNet", "PomodoroProtocol", "PomodoroClient",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          swiftSettings: strict),

        // What several test targets share: a manual server clock, a fake transport, the process launcher.
        .target(name: "PomodoroTestSupport",
                dependencies: ["PomodoroServer", "PomodoroCluster", "PomodoroNet", "PomodoroProtocol", "PomodoroStore",
                               "PomodoroSQLite", "PomodoroCore", .product(name: "Logging", package: "swift-log")],
                path: "Tests/PomodoroTestSupport", swiftSettings: strict),

        .testTarget(name: "PomodoroCoreTests", dependencies: ["PomodoroCore"], swiftSettings: strict),
        .testTarget(name: "PomodoroStoreTests",
                    dependencies: ["PomodoroStore", "PomodoroSQLite", "PomodoroCore", "PomodoroTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "PomodoroPostgresTests",
                    dependencies: ["PomodoroPostgres", "PomodoroStore", "PomodoroSQLite", "PomodoroCore", "PomodoroServer", "PomodoroNet",
                                   "PomodoroProtocol", "PomodoroTestSupport", "PomodoroCluster"],
                    swiftSettings: strict),
        .testTarget(name: "PomodoroClusterTests",
                    dependencies: ["PomodoroCluster", "PomodoroPostgres", "PomodoroStore", "PomodoroCore",
                                   "PomodoroTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "PomodoroProtocolTests", dependencies: ["PomodoroProtocol"], swiftSettings: strict),
        .testTarget(name: "PomodoroServerTests",
                    dependencies: ["PomodoroServer", "PomodoroCluster", "PomodoroNet", "PomodoroProtocol", "PomodoroStore",
                                   "PomodoroSQLite", "PomodoroCore", "PomodoroTestSupport",
                                   // BackupTests read every row of a backup and its original.
                                   .product(name: "GRDB", package: "GRDB.swift")],
                    swiftSettings: strict),
        .testTarget(name: "PomodoroServerCLITests",
                    dependencies: ["PomodoroServerCLI", "PomodoroServer", "PomodoroStore", "PomodoroTestSupport",
                                   .product(name: "Logging", package: "swift-log")],
                    swiftSettings: strict),
        .testTarget(name: "PomodoroBenchTests", dependencies: ["PomodoroBench", "PomodoroProtocol"],
                    swiftSettings: strict),
        .testTarget(name: "PomoTests",
                    dependencies: ["PomodoroClient", "PomodoroProtocol", "PomodoroCore", "PomodoroNet", "PomodoroTestSupport"],
                    swiftSettings: strict),
    ]
)
