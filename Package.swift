// swift-tools-version:6.2
import Foundation
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

/// `FLEETAUTH_THREAD_SANITIZER=1` declares only what CI's ThreadSanitizer step runs: the libraries, and the test
/// targets of the client SDK, the live stack and the server support (the batches' hand-off). The `fleetauth`
/// command, the benchmarks and the other test targets are left out, so that build compiles only what its tests need.
let forThreadSanitizer = ProcessInfo.processInfo.environment["FLEETAUTH_THREAD_SANITIZER"] != nil

/// The OTLP trace exporter (swift-otel) is left out of a build made with `FLEETAUTH_WITHOUT_OTEL=1` (and of the
/// ThreadSanitizer build above, where Swift 6.3 rejects swift-otel 1.6.0's source: a `sending` diagnostic it raises
/// only with `-sanitize=thread`). Such a `fleetauth` refuses `OTEL_EXPORTER_OTLP_ENDPOINT` with a clear error.
let withOTel = ProcessInfo.processInfo.environment["FLEETAUTH_WITHOUT_OTEL"] == nil && !forThreadSanitizer

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
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "FleetAuthCore",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FleetAuthClient",
            dependencies: [
                "FleetAuthCore",
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
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
            dependencies: [
                "FleetAuthCore",
                "CPKCS11",
                "CLibcrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Keyless signing through Google: Application Default Credentials, OAuth access tokens, and the IAM
        // Credentials API's signJwt, over AsyncHTTPClient's pooled connections.
        .target(
            name: "FleetAuthIAM",
            dependencies: [
                "FleetAuthCore",
                "FleetAuthJWT",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // What both servers stand on: Google's error body, JSON in and out, the HTTP application with limits, the
        // logging policy, SQLite and PostgreSQL opened one way, periodic work, and the trust-file format. No product
        // of its own: each server re-exports its user-facing types by name (Exports.swift); the rest is `package`.
        .target(
            name: "FleetAuthServerSupport",
            dependencies: [
                "FleetAuthCore",
                "FleetAuthJWT",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCertificateReloading", package: "swift-nio-extras"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // maps.fleetengine.v1 as Swift: messages and gRPC stubs generated from Protos/ by
        // Scripts/generate-protos.sh and committed, so no build compiles protoc. Generated code keeps the
        // generators' own import style, so it takes only the language mode.
        .target(
            name: "FleetEngineAPI",
            dependencies: [
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
            ]
        ),
        .target(
            name: "FleetEngineEmulator",
            dependencies: [
                "FleetAuthCore",
                "FleetAuthJWT",
                "FleetAuthServerSupport",
                "FleetEngineAPI",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            resources: [.copy("Resources/openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FleetTokenServer",
            dependencies: [
                "FleetAuthCore",
                "FleetAuthJWT",
                "FleetAuthIAM",
                "FleetAuthServerSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            // The browser pages: plain HTML, CSS and JavaScript modules, served under /app.
            resources: [.copy("Web")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FleetAuthStack",
            dependencies: [
                "FleetAuthCore",
                "FleetEngineEmulator",
                "FleetTokenServer",
                "FleetAuthIAM",
                "FleetAuthJWT",
                "FleetAuthServerSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The tests' PostgreSQL server (a fresh database per test); test support, not a product.
        .target(
            name: "FleetAuthServerTesting",
            dependencies: [
                "FleetAuthServerSupport", "FleetAuthCore", "FleetAuthJWT",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FleetAuthTesting",
            dependencies: ["FleetAuthCore", "FleetAuthClient", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // `fleetauth bench`: beside the product code, not in it; the CLI links it so the benchmarks measure the
        // code that ships (see BenchCommand).
        .target(
            name: "FleetAuthBenchmarks",
            dependencies: [
                "FleetAuthCore",
                "FleetEngineAPI",
                "FleetAuthJWT",
                "FleetAuthClient",
                "FleetEngineEmulator",
                "FleetTokenServer",
                "FleetAuthIAM",
                "FleetAuthServerSupport",
                "FleetAuthServerTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "fleetauth",
            dependencies: [
                "FleetAuthCore",
                "FleetAuthServerSupport",
                "FleetAuthJWT",
                "FleetAuthIAM",
                "FleetEngineEmulator",
                "FleetTokenServer",
                "FleetAuthClient",
                "FleetAuthStack",
                "FleetAuthBenchmarks",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ] + (withOTel ? [.product(name: "OTel", package: "swift-otel")] : []),
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
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthServerSupportTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthServerSupport", "FleetAuthServerTesting", "FleetAuthTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthJWTTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetAuthTesting", "FleetAuthServerTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthIAMTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetAuthIAM", "FleetAuthTesting", "FleetAuthServerTesting",
                "FleetEngineEmulator", "FleetAuthServerSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetEngineEmulatorTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetEngineEmulator", "FleetAuthTesting", "FleetEngineAPI",
                "FleetAuthServerSupport", "FleetAuthServerTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetTokenServerTests",
            dependencies: [
                "FleetAuthCore", "FleetAuthJWT", "FleetAuthClient", "FleetTokenServer", "FleetEngineEmulator",
                "FleetAuthTesting", "FleetAuthIAM",
                "FleetAuthServerSupport", "FleetAuthServerTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetAuthCLITests",
            dependencies: [
                "fleetauth", "FleetAuthCore", "FleetAuthJWT", "FleetTokenServer", "FleetEngineEmulator",
                "FleetAuthServerSupport", "FleetAuthServerTesting",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

if forThreadSanitizer {
    let sanitized: Set<String> = ["FleetAuthClientTests", "FleetAuthStackTests", "FleetAuthServerSupportTests"]
    let leftOut: Set<String> = ["fleetauth", "FleetAuthBenchmarks"]
    package.targets.removeAll { leftOut.contains($0.name) || ($0.type == .test && !sanitized.contains($0.name)) }
    package.products.removeAll { leftOut.contains($0.name) }
}

// MARK: - Fuzzing

/// `FLEETAUTH_FUZZ=1 swift build --scratch-path .build-fuzz --product fuzz-filter` (what `Scripts/fuzz.sh` runs):
/// libFuzzer targets for the readers of attacker input, with the modules under test instrumented for coverage.
/// Only then: a normal build neither sees these targets nor pays for the instrumentation.
if ProcessInfo.processInfo.environment["FLEETAUTH_FUZZ"] != nil {
    let instrumented: Set<String> = ["FleetAuthCore", "FleetAuthJWT", "FleetAuthServerSupport", "FleetEngineEmulator"]
    for target in package.targets where instrumented.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer"])]
    }
    package.targets.append(.target(name: "CFuzzDriver", path: "Fuzz/CFuzzDriver"))
    package.targets.append(
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzDriver"],
            path: "Fuzz/FuzzSupport",
            swiftSettings: swiftSettings
        )
    )
    let fuzzTargets: [(String, [Target.Dependency])] = [
        ("fuzz-json", ["FleetAuthCore"]),
        ("fuzz-jws", ["FleetAuthCore"]),
        ("fuzz-verifier", ["FleetAuthCore", "FleetAuthJWT"]),
        ("fuzz-proto-json", ["FleetEngineEmulator", "FleetEngineAPI"]),
        ("fuzz-filter", ["FleetEngineEmulator"]),
        ("fuzz-field-mask", ["FleetEngineEmulator", "FleetEngineAPI"]),
    ]
    for (name, dependencies) in fuzzTargets {
        package.targets.append(
            .executableTarget(
                name: name,
                dependencies: dependencies + ["FuzzSupport"],
                path: "Fuzz/\(name)",
                swiftSettings: swiftSettings + [.unsafeFlags(["-sanitize=fuzzer", "-parse-as-library"])],
                linkerSettings: [.unsafeFlags(["-sanitize=fuzzer"])]
            )
        )
        package.products.append(.executable(name: name, targets: [name]))
    }
}

if withOTel {
    package.dependencies.append(.package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0"))
}
