// swift-tools-version:6.2
import PackageDescription

/// One set of compiler settings for every target (the Architecture article in FleetAuthCore's documentation says
/// why): Swift 6 language mode, explicit existentials, imports that are internal unless a declaration says
/// `public import`, and member visibility tied to imports.
///
/// `FleetAuthGRPC` names the platforms gRPC Swift 2 needs (it declares its APIs for macOS 15 / iOS 18 and later):
/// the emulator's gRPC code is `@available(FleetAuthGRPC, *)`, so the package — and `FleetAuthCore` and
/// `FleetAuthClient` above all — keeps its minimums of macOS 14 and iOS 17.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableExperimentalFeature(
        "AvailabilityMacro=FleetAuthGRPC:macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0"
    ),
]

/// Which package each product named below comes from.
let packageOf: [String: String] = [
    "ArgumentParser": "swift-argument-parser",
    "AsyncHTTPClient": "async-http-client",
    "Crypto": "swift-crypto", "CryptoExtras": "swift-crypto",
    "GRDB": "GRDB.swift",
    "GRPCCore": "grpc-swift-2", "GRPCProtobuf": "grpc-swift-protobuf",
    "GRPCNIOTransportHTTP2": "grpc-swift-nio-transport",
    "HTTPTypes": "swift-http-types",
    "Hummingbird": "hummingbird", "HummingbirdCore": "hummingbird", "HummingbirdHTTP2": "hummingbird",
    "HummingbirdTesting": "hummingbird", "HummingbirdBcrypt": "hummingbird-auth",
    "Instrumentation": "swift-distributed-tracing", "Tracing": "swift-distributed-tracing",
    "Logging": "swift-log",
    "NIOCore": "swift-nio", "NIOPosix": "swift-nio", "NIOHTTP1": "swift-nio", "NIOConcurrencyHelpers": "swift-nio",
    "NIOSSL": "swift-nio-ssl", "NIOHTTP2": "swift-nio-http2", "NIOCertificateReloading": "swift-nio-extras",
    "NIOHTTPTypes": "swift-nio-extras",
    "OTel": "swift-otel",
    "PostgresNIO": "postgres-nio",
    "Prometheus": "swift-prometheus",
    "ServiceLifecycle": "swift-service-lifecycle", "UnixSignals": "swift-service-lifecycle",
    "SwiftProtobuf": "swift-protobuf",
]

/// Products of other packages that a target uses only when `trait` is enabled. Every product of another package is
/// named through here: SwiftPM then leaves a package out of the graph (it does not even fetch it) when only disabled
/// traits use it, so an app that asks for `traits: []` and the product `FleetAuthClient` resolves FleetAuth alone.
func products(_ names: [String], trait: String = "Server") -> [Target.Dependency] {
    names.map { name in
        guard let package = packageOf[name] else { fatalError("Package.swift: which package has the product \(name)?") }
        return .product(name: name, package: package, condition: .when(traits: [trait]))
    }
}

let package = Package(
    name: "FleetAuth",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "FleetAuthCore", targets: ["FleetAuthCore"]),
        .library(name: "FleetAuthJWT", targets: ["FleetAuthJWT"]),
        .library(name: "FleetAuthIAM", targets: ["FleetAuthIAM"]),
        .library(name: "FleetAuthClient", targets: ["FleetAuthClient"]),
        .library(name: "FleetAuthTesting", targets: ["FleetAuthTesting"]),
        .library(name: "FleetEngineAPI", targets: ["FleetEngineAPI"]),
        .library(name: "FleetEngineEmulator", targets: ["FleetEngineEmulator"]),
        .library(name: "FleetTokenServer", targets: ["FleetTokenServer"]),
        .library(name: "FleetAuthStack", targets: ["FleetAuthStack"]),
        .executable(name: "fleetauth", targets: ["fleetauth"]),
    ],
    // An app that wants only the client writes `.package(url: …, from: …, traits: [])`: FleetAuthClient and
    // FleetAuthCore need Foundation alone, and no other package is fetched. The server side's products need `Server`.
    traits: [
        .trait(
            name: "DistributedTracing",
            description: """
                FleetAuthClient carries the app's trace (W3C traceparent) to the token server and Fleet Engine, \
                through swift-distributed-tracing.
                """
        ),
        .trait(
            name: "Server",
            description: """
                The server side: FleetAuthJWT, FleetAuthIAM, FleetTokenServer, FleetEngineEmulator, FleetAuthStack, \
                FleetAuthTesting's log recorder and the fleetauth command, with SwiftNIO, Hummingbird, gRPC, GRDB, \
                PostgresNIO and the other packages they use.
                """,
            enabledTraits: ["DistributedTracing"]
        ),
        .trait(
            name: "OTLPExporter",
            description:
                "fleetauth exports traces over OTLP/HTTP (swift-otel) when OTEL_EXPORTER_OTLP_ENDPOINT is set.",
            enabledTraits: ["Server"]
        ),
        .default(enabledTraits: ["DistributedTracing", "Server", "OTLPExporter"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "4.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0"),
    ],
    targets: [
        .target(
            name: "FleetAuthCore",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FleetAuthClient",
            dependencies: ["FleetAuthCore"] + products(["Instrumentation"], trait: "DistributedTracing"),
            swiftSettings: swiftSettings
        ),
        // The PKCS#11 interface, declared from the standard, and a loader that opens a module with dlopen at run time:
        // a machine without any PKCS#11 library builds everything.
        .target(
            name: "CPKCS11",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        // OpenSSL 3's libcrypto, opened with dlopen at run time to sign RSA where it is faster than BoringSSL.
        .target(
            name: "CLibcrypto",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        .target(
            name: "FleetAuthJWT",
            dependencies: ["FleetAuthCore", "CPKCS11", "CLibcrypto"] + products(["Crypto", "CryptoExtras"]),
            swiftSettings: swiftSettings
        ),
        // Keyless signing through Google: Application Default Credentials, OAuth access tokens, and the IAM
        // Credentials API's signJwt, over AsyncHTTPClient's pooled connections.
        .target(
            name: "FleetAuthIAM",
            dependencies: ["FleetAuthCore", "FleetAuthJWT"]
                + products(["AsyncHTTPClient", "NIOCore", "NIOHTTP1", "Logging", "Instrumentation"]),
            swiftSettings: swiftSettings
        ),
        // What both servers stand on, split by concern so that each module links only what it needs. None is a
        // product: each server re-exports its user-facing types by name (Exports.swift); the rest is `package`.
        // FleetAuthServerCore: Google's error and the store's, the logging policy, the trust-file format and key
        // refetching; no HTTP framework and no database.
        .target(
            name: "FleetAuthServerCore",
            dependencies: ["FleetAuthCore", "FleetAuthJWT"] + products(["Logging", "NIOConcurrencyHelpers"]),
            swiftSettings: swiftSettings
        ),
        // FleetAuthDatabase: SQLite and PostgreSQL opened one way, with deadlines, group commit and migrations.
        .target(
            name: "FleetAuthDatabase",
            dependencies: ["FleetAuthCore", "FleetAuthServerCore"]
                + products([
                    "GRDB", "PostgresNIO", "NIOCore", "NIOPosix", "NIOConcurrencyHelpers", "Logging",
                    "ServiceLifecycle",
                ]),
            swiftSettings: swiftSettings
        ),
        // FleetAuthServerSupport: the HTTP side: Google's error body over Hummingbird, JSON in and out with limits,
        // the application with its listeners, certificates and readiness, periodic work and request tracing.
        .target(
            name: "FleetAuthServerSupport",
            dependencies: ["FleetAuthCore", "FleetAuthServerCore"]
                + products([
                    "Hummingbird", "HummingbirdCore", "HummingbirdHTTP2", "NIOCore", "NIOConcurrencyHelpers", "NIOSSL",
                    "NIOCertificateReloading", "NIOHTTPTypes", "HTTPTypes", "UnixSignals", "Logging",
                    "ServiceLifecycle",
                    "Tracing", "Instrumentation",
                ]),
            swiftSettings: swiftSettings
        ),
        // maps.fleetengine.v1 as Swift: messages and gRPC stubs generated from Protos/ by
        // Scripts/generate-protos.sh and committed, so no build compiles protoc. Generated code keeps the
        // generators' own import style, so it takes only the language mode.
        .target(
            name: "FleetEngineAPI",
            dependencies: products(["SwiftProtobuf", "GRPCCore", "GRPCProtobuf"])
        ),
        .target(
            name: "FleetEngineEmulator",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetAuthServerCore", "FleetAuthDatabase", "FleetAuthServerSupport",
                "FleetEngineAPI",
            ]
                + products([
                    "SwiftProtobuf", "GRPCCore", "GRPCProtobuf", "GRPCNIOTransportHTTP2", "HTTPTypes", "Hummingbird",
                    "GRDB", "PostgresNIO", "NIOCore", "NIOPosix", "NIOHTTP2", "Logging", "Prometheus",
                    "ServiceLifecycle", "NIOConcurrencyHelpers", "Tracing", "Instrumentation",
                ]),
            resources: [.copy("Resources/openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FleetTokenServer",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetAuthIAM", "FleetAuthServerCore", "FleetAuthDatabase",
                "FleetAuthServerSupport",
            ]
                + products([
                    "Hummingbird", "HummingbirdBcrypt", "NIOPosix", "Crypto", "GRDB", "PostgresNIO", "NIOCore",
                    "Logging", "ServiceLifecycle", "NIOConcurrencyHelpers", "Prometheus", "Tracing",
                ]),
            // The browser pages: plain HTML, CSS and JavaScript modules, served under /app.
            resources: [.copy("Web")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FleetAuthStack",
            dependencies: [
                "FleetAuthCore", "FleetEngineEmulator", "FleetTokenServer", "FleetAuthIAM", "FleetAuthJWT",
                "FleetAuthServerCore", "FleetAuthServerSupport",
            ] + products(["Logging", "ServiceLifecycle", "UnixSignals"]),
            swiftSettings: swiftSettings
        ),
        // The tests' PostgreSQL server (a fresh database per test); test support, not a product.
        .target(
            name: "FleetAuthServerTesting",
            dependencies: [
                "FleetAuthServerCore", "FleetAuthDatabase", "FleetAuthServerSupport", "FleetAuthCore", "FleetAuthJWT",
            ]
                + products(["PostgresNIO", "HTTPTypes", "Hummingbird", "NIOConcurrencyHelpers", "Crypto"]),
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FleetAuthTesting",
            dependencies: ["FleetAuthCore", "FleetAuthClient"] + products(["Logging"]),
            swiftSettings: swiftSettings
        ),
        // `fleetauth bench`: beside the product code, not in it; the CLI links it so the benchmarks measure the
        // code that ships (see BenchCommand).
        .target(
            name: "FleetAuthBenchmarks",
            dependencies: [
                "FleetAuthCore", "FleetEngineAPI", "FleetAuthJWT", "FleetAuthClient", "FleetEngineEmulator",
                "FleetTokenServer", "FleetAuthIAM", "FleetAuthServerCore", "FleetAuthDatabase",
                "FleetAuthServerSupport", "FleetAuthServerTesting",
            ]
                + products([
                    "PostgresNIO", "GRPCCore", "GRPCNIOTransportHTTP2", "SwiftProtobuf", "Hummingbird", "NIOCore",
                    "NIOPosix", "NIOHTTP1", "Logging", "ServiceLifecycle", "ArgumentParser", "Crypto", "CryptoExtras",
                ]),
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "fleetauth",
            dependencies: [
                "FleetAuthCore", "FleetAuthServerCore", "FleetAuthDatabase", "FleetAuthServerSupport", "FleetAuthJWT",
                "FleetAuthIAM", "FleetEngineEmulator",
                "FleetTokenServer", "FleetAuthClient", "FleetAuthStack", "FleetAuthBenchmarks",
            ] + products(["Logging", "ServiceLifecycle", "UnixSignals", "ArgumentParser"])
                + products(["OTel"], trait: "OTLPExporter"),
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthCoreTests",
            dependencies: ["FleetAuthCore", "FleetAuthTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthClientTests",
            dependencies: ["FleetAuthCore", "FleetAuthClient", "FleetAuthTesting"],
            swiftSettings: swiftSettings
        ),
        // The whole chain in one process: the client SDK against a live emulator and token server.
        .testTarget(
            name: "FleetAuthStackTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthClient", "FleetAuthTesting", "FleetTokenServer", "FleetAuthStack",
                "FleetAuthJWT", "FleetEngineEmulator", "FleetAuthServerTesting",
            ] + products(["ServiceLifecycle", "Logging"]),
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthServerSupportTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthServerCore", "FleetAuthDatabase", "FleetAuthServerSupport",
                "FleetAuthServerTesting", "FleetAuthTesting",
            ]
                + products(["GRDB", "Logging", "NIOConcurrencyHelpers", "NIOSSL", "PostgresNIO", "ServiceLifecycle"]),
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthJWTTests",
            dependencies: ["FleetAuthCore", "FleetAuthJWT", "FleetAuthTesting", "FleetAuthServerTesting"]
                + products(["Crypto", "CryptoExtras"]),
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthIAMTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetAuthIAM", "FleetAuthTesting", "FleetAuthServerTesting",
                "FleetEngineEmulator", "FleetAuthServerCore",
            ] + products(["Hummingbird", "HummingbirdTesting"]),
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetEngineEmulatorTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetEngineEmulator", "FleetAuthTesting", "FleetEngineAPI",
                "FleetAuthServerCore", "FleetAuthDatabase", "FleetAuthServerSupport", "FleetAuthServerTesting",
            ]
                + products([
                    "PostgresNIO", "GRDB", "SwiftProtobuf", "GRPCCore", "GRPCNIOTransportHTTP2", "Hummingbird",
                    "HummingbirdTesting", "NIOCore", "NIOPosix", "Logging", "ServiceLifecycle", "NIOConcurrencyHelpers",
                ]),
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetTokenServerTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetAuthClient", "FleetTokenServer", "FleetEngineEmulator",
                "FleetAuthTesting", "FleetAuthIAM", "FleetAuthServerCore", "FleetAuthServerSupport",
                "FleetAuthServerTesting",
            ]
                + products([
                    "PostgresNIO", "Hummingbird", "HummingbirdTesting", "Crypto", "ServiceLifecycle", "Logging",
                ]),
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthCLITests",
            dependencies: [
                "fleetauth", "FleetAuthCore", "FleetAuthJWT", "FleetTokenServer", "FleetEngineEmulator",
                "FleetAuthServerCore", "FleetAuthServerTesting",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
