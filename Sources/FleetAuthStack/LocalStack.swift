public import FleetAuthCore
import FleetAuthIAM
public import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerSupport
public import FleetEngineEmulator
public import FleetTokenServer
import Foundation
public import Logging
import ServiceLifecycle
public import UnixSignals

/// The whole server side on loopback: the token server, and a Fleet Engine emulator that trusts the token server's
/// keys by their JWK set URL (so key rotations reach it without a restart) and lets the token server's pages call it
/// from the browser (CORS). Used by `fleetauth demo`,
/// `fleetauth serve` and the client's live tests.
///
/// State lives in a data directory: `token-server.sqlite`, `keys/` (generated service-account keys, 0600),
/// `emulator-trust.json` and `fleet-engine.sqlite`.
public struct LocalStack {
    /// Where the two servers listen.
    public struct Endpoints: Sendable, Hashable {
        /// The emulator's REST base URL, such as `http://127.0.0.1:8787`.
        public let emulatorURL: String
        /// The emulator's gRPC address (plaintext HTTP/2), such as `127.0.0.1:8786`; nil where gRPC is not
        /// available (before macOS 15).
        public let emulatorGRPCAddress: String?
        /// The token server's base URL, such as `http://127.0.0.1:8788`.
        public let tokenServerURL: String
        /// The Fleet Engine provider (project) of the generated keys.
        public let project: String

        public init(emulatorURL: String, emulatorGRPCAddress: String?, tokenServerURL: String, project: String) {
            self.emulatorURL = emulatorURL
            self.emulatorGRPCAddress = emulatorGRPCAddress
            self.tokenServerURL = tokenServerURL
            self.project = project
        }
    }

    public let dataDirectory: String
    /// The token server (its store, users, login and keys).
    public let tokenServer: TokenServer
    /// The emulator's vehicles and trips.
    package let fleetStore: any EmulatorStore
    /// Keyless mode: the loopback port of the emulator's stand-ins for Google's IAM and metadata server, which hold
    /// the token server's accounts' keys (`DATA/iam/`) and sign only as those; the token server signs every family
    /// through them.
    public let keylessIAMPort: Int?
    private let iamKeys: [TokenFamily: ServiceAccountKey]
    private let clock: any WallClock

    /// The Fleet Engine provider of the generated keys.
    public var project: String { tokenServer.configuration.project }

    /// Opens (or creates) the data directory's stores and keys.
    ///
    /// - Parameters:
    ///   - dataDirectory: where state lives; created if missing.
    ///   - tokenServer: the token server's configuration (its `dataDirectory` is replaced by `dataDirectory`).
    ///   - clock: both servers' clock.
    ///   - auditLogger: where the token server logs every issued token (without the token).
    ///   - keylessIAMPort: keyless mode (see ``keylessIAMPort``): the IAM stand-ins' loopback port (0 picks a free
    ///     one now); nil for the token server's own keys.
    ///   - keyGenerator: how missing keys (the token server's, or the IAM stand-ins' accounts') are made.
    public init(
        dataDirectory: String,
        tokenServer configuration: TokenServer.Configuration? = nil,
        clock: any WallClock = .system,
        auditLogger: Logger = .silent(label: "fleetauth.token-server.audit"),
        keylessIAMPort: Int? = nil,
        keyGenerator: KeyGenerator = .fresh
    ) async throws {
        try PrivateFiles.directory(dataDirectory)
        try await self.init(
            dataDirectory: dataDirectory,
            tokenServer: configuration,
            tokenServerStore: try SQLiteTokenServerStore(path: dataDirectory + "/" + TokenServer.databaseFileName),
            fleetStore: try SQLiteFleetStore(path: dataDirectory + "/" + EmulatorServer.databaseFileName),
            clock: clock,
            auditLogger: auditLogger,
            keylessIAMPort: keylessIAMPort,
            keyGenerator: keyGenerator
        )
    }

    /// Both servers on stores of the caller's choice (PostgreSQL, for instance); the data directory still holds
    /// the emulator's trust file and, without a key-encryption key, the generated keys.
    public init(
        dataDirectory: String,
        tokenServer configuration: TokenServer.Configuration? = nil,
        tokenServerStore: any TokenServerStorage,
        fleetStore: some EmulatorStorage,
        clock: any WallClock = .system,
        auditLogger: Logger = .silent(label: "fleetauth.token-server.audit"),
        keylessIAMPort: Int? = nil,
        keyGenerator: KeyGenerator = .fresh
    ) async throws {
        try PrivateFiles.directory(dataDirectory)
        self.dataDirectory = dataDirectory
        self.clock = clock
        var configuration = configuration ?? TokenServer.Configuration(dataDirectory: dataDirectory)
        configuration.dataDirectory = dataDirectory
        self.fleetStore = fleetStore.emulatorStore.store
        var signers: [TokenFamily: KeylessSigner] = [:]
        var iamKeys: [TokenFamily: ServiceAccountKey] = [:]
        var port = keylessIAMPort
        if let requested = keylessIAMPort {
            // Below the ephemeral range: a port-0 bind elsewhere (another server starting meanwhile, a gRPC port)
            // cannot be handed this port between choosing it and the IAM stand-in binding it.
            let chosen = requested == 0 ? try LoopbackPort.freeOutsideEphemeralRange(excluding: []) : requested
            port = chosen
            let base = "http://127.0.0.1:\(chosen)"
            let accessTokens = AccessTokenSource(
                credentials: .metadataServer(host: "127.0.0.1:\(chosen)"),
                clock: clock
            )
            let directory = dataDirectory + "/iam"
            try PrivateFiles.directory(directory)
            for family in TokenFamily.allCases {
                let path = "\(directory)/\(family.rawValue).json"
                let key: ServiceAccountKey
                if FileManager.default.fileExists(atPath: path) {
                    key = try ServiceAccountKey(contentsOf: path)
                } else {
                    key = try await keyGenerator(projectID: configuration.project, name: family.accountName)
                    try key.write(to: path)
                }
                iamKeys[family] = key
                signers[family] = .iam(
                    IAMCredentialsSigner(
                        serviceAccountEmail: key.clientEmail,
                        accessTokens: accessTokens,
                        configuration: .init(baseURL: base)
                    ),
                    googleKeysURL: base,
                    clock: clock
                )
            }
        }
        self.keylessIAMPort = port
        self.iamKeys = iamKeys
        tokenServer = try await TokenServer(
            configuration: configuration,
            store: tokenServerStore,
            keylessSigners: signers,
            clock: clock,
            keyGenerator: keyGenerator,
            auditLogger: auditLogger
        )
    }

    /// Starts the token server, then the emulator trusting it, runs `body` with their addresses (in this task),
    /// and shuts both down gracefully when `body` returns or throws.
    ///
    /// - Parameters:
    ///   - host: the address both listen on.
    ///   - emulatorPort: the emulator's REST port (0 picks a free one).
    ///   - emulatorGRPCPort: the emulator's gRPC port (0 picks a free one).
    ///   - tokenServerPort: the token server's port (0 picks a free one).
    ///   - logger: the servers' logger.
    ///   - body: what to do while they run.
    public func run<Result>(
        host: String = "127.0.0.1",
        emulatorPort: Int = 0,
        emulatorGRPCPort: Int = 0,
        tokenServerPort: Int = 0,
        logger: Logger = .silent(label: "fleetauth.stack"),
        _ body: (Endpoints) async throws -> Result
    ) async throws -> Result {
        try await start(
            host: host,
            emulatorPort: emulatorPort,
            emulatorGRPCPort: emulatorGRPCPort,
            tokenServerPort: tokenServerPort,
            shutdownSignals: [],
            logger: logger
        ) { endpoints, _ in try await body(endpoints) }
    }

    /// Starts both servers, calls `onReady` with their addresses, and keeps them running until one of
    /// `shutdownSignals` arrives (or a server fails), then shuts both down gracefully.
    public func serve(
        host: String = "127.0.0.1",
        emulatorPort: Int = 8787,
        emulatorGRPCPort: Int = 8786,
        tokenServerPort: Int = 8788,
        shutdownSignals: [UnixSignal] = [.sigint, .sigterm],
        logger: Logger = .quiet(label: "fleetauth.stack"),
        onReady: (Endpoints) async throws -> Void
    ) async throws {
        try await start(
            host: host,
            emulatorPort: emulatorPort,
            emulatorGRPCPort: emulatorGRPCPort,
            tokenServerPort: tokenServerPort,
            shutdownSignals: shutdownSignals,
            logger: logger
        ) { endpoints, tasks in
            try await onReady(endpoints)
            _ = try await tasks.next()
        }
    }

    /// Runs the token server, then (once it listens, so its JWK set URLs are known) the emulator trusting it, each
    /// in a service group of its own; `body` runs while both listen.
    private func start<Result>(
        host: String,
        emulatorPort: Int,
        emulatorGRPCPort: Int,
        tokenServerPort: Int,
        shutdownSignals: [UnixSignal],
        logger: Logger,
        _ body: (Endpoints, inout ThrowingTaskGroup<Void, any Error>) async throws -> Result
    ) async throws -> Result {
        let tokenPorts = AsyncStream.makeStream(of: Int.self)
        let tokenGroup = ServiceGroup(
            configuration: Self.groupConfiguration(
                tokenServer.services(host: host, port: tokenServerPort, logger: logger) {
                    tokenPorts.continuation.yield($0)
                },
                signals: shutdownSignals,
                logger: logger
            )
        )
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { tokenPorts.continuation.finish() }
                try await tokenGroup.run()
            }
            var emulatorGroup: ServiceGroup?
            do {
                var ports = tokenPorts.stream.makeAsyncIterator()
                guard let tokenPort = await ports.next() else { throw try await Self.failure(of: &tasks) }
                let tokenServerURL = "http://\(host):\(tokenPort)"
                // Keyless: the emulator holds the accounts' keys, as Google would, and trusts them by key file.
                let trust =
                    keylessIAMPort == nil
                    ? tokenServer.keyring.trustConfiguration(baseURL: tokenServerURL)
                    : TrustConfiguration(
                        serviceAccounts: iamKeys.sorted { $0.key.rawValue < $1.key.rawValue }.map { family, key in
                            .init(
                                account: TrustedServiceAccount(
                                    email: key.clientEmail,
                                    project: key.projectID,
                                    roles: family.roles
                                ),
                                keySource: .keyFile("\(dataDirectory)/iam/\(family.rawValue).json")
                            )
                        }
                    )
                // Keyless: the IAM stand-ins sign as the token server's accounts, and as no other.
                let iam =
                    keylessIAMPort == nil
                    ? nil
                    : try await LocalIAM(
                        keys: Array(iamKeys.values),
                        signableAccounts: Set(iamKeys.values.map(\.clientEmail)),
                        clock: clock
                    )
                // Pages served by the token server call the emulator from the browser: allow that origin. The test
                // controls are on where only this machine reaches them.
                let emulator = try await EmulatorServer(
                    configuration: .init(allowedOrigins: [tokenServerURL], testControls: LocalIAM.isLoopback(host)),
                    trust: trust,
                    store: fleetStore,
                    iam: iam,
                    clock: clock
                )
                let emulatorPorts = AsyncStream.makeStream(of: Int.self)
                let grpcPorts = AsyncStream.makeStream(of: Int.self)
                let services = try emulator.services(
                    host: host,
                    port: emulatorPort,
                    grpcPort: emulatorGRPCPort,
                    iamPort: keylessIAMPort,
                    logger: logger,
                    onServerRunning: { emulatorPorts.continuation.yield($0) },
                    onGRPCServerRunning: { grpcPorts.continuation.yield($0) }
                )
                // The store and the REST server, then gRPC where the platform has it, then the IAM stand-ins.
                let servesGRPC = services.count > (keylessIAMPort == nil ? 2 : 3)
                if !servesGRPC { grpcPorts.continuation.finish() }
                let group = ServiceGroup(
                    configuration: Self.groupConfiguration(services, signals: shutdownSignals, logger: logger)
                )
                emulatorGroup = group
                tasks.addTask {
                    defer {
                        emulatorPorts.continuation.finish()
                        grpcPorts.continuation.finish()
                    }
                    try await group.run()
                }
                var emulatorIterator = emulatorPorts.stream.makeAsyncIterator()
                guard let port = await emulatorIterator.next() else { throw try await Self.failure(of: &tasks) }
                var grpcIterator = grpcPorts.stream.makeAsyncIterator()
                let grpcPort = await grpcIterator.next()
                if servesGRPC, grpcPort == nil { throw try await Self.failure(of: &tasks) }
                tokenServer.webApp.fleetEngineURL = "http://\(host):\(port)"
                let endpoints = Endpoints(
                    emulatorURL: "http://\(host):\(port)",
                    emulatorGRPCAddress: grpcPort.map { "\(host):\($0)" },
                    tokenServerURL: tokenServerURL,
                    project: project
                )
                let result = try await body(endpoints, &tasks)
                await Self.shutDown(emulatorGroup, tokenGroup)
                try await tasks.waitForAll()
                return result
            } catch {
                // Both groups end gracefully (a listener already bound closes without cancellation noise).
                await Self.shutDown(emulatorGroup, tokenGroup)
                while true {
                    do {
                        if try await tasks.next() == nil { break }
                    } catch {
                        continue
                    }
                }
                throw error
            }
        }
    }

    /// A server's group: a service that fails ends the others gracefully, and a graceful shutdown that takes over
    /// 10 s is cancelled. No cancellation limit: the library's ends the process with a fatal error, so whoever runs
    /// the stack bounds it instead (`fleetauth serve` exits with one line past 15 s).
    private static func groupConfiguration(_ services: [any Service], signals: [UnixSignal], logger: Logger)
        -> ServiceGroupConfiguration
    {
        var configuration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0, failureTerminationBehavior: .gracefullyShutdownGroup) },
            gracefulShutdownSignals: signals,
            logger: logger
        )
        configuration.maximumGracefulShutdownDuration = .seconds(10)
        configuration.maximumCancellationDuration = nil
        return configuration
    }

    /// A server ended before it listened: its error, or a plain one if it ended quietly.
    private static func failure(of tasks: inout ThrowingTaskGroup<Void, any Error>) async throws -> LocalStackError {
        _ = try await tasks.next()
        return LocalStackError("A server stopped before it was listening.")
    }

    private static func shutDown(_ groups: ServiceGroup?...) async {
        for group in groups { await group?.triggerGracefulShutdown() }
    }
}

/// A failure to start the local stack.
public struct LocalStackError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
