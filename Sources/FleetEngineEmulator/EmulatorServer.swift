public import FleetAuthCore
public import FleetAuthJWT
public import FleetAuthServerCore
public import FleetAuthServerSupport
public import Hummingbird
public import Logging
public import ServiceLifecycle

/// A local Fleet Engine, assembled: the authenticator, the metrics and the router over a store, and the HTTP
/// server that serves them. `fleetauth emulator`, `fleetauth serve`, `fleetauth demo` and the tests run it.
///
/// ```swift
/// let store = try SQLiteFleetStore(path: "fleet-engine-data/" + EmulatorServer.databaseFileName)
/// let server = try await EmulatorServer(trust: TrustConfiguration(contentsOf: "trust.json"), store: store)
/// try await ServiceGroup(services: server.services(), gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
public struct EmulatorServer {
    /// How the emulator listens and what it accepts.
    public struct Configuration: Sendable, Hashable {
        /// Header, body and idle limits (the idle timeout holds on the gRPC port too).
        public var limits: ServerLimits
        /// How long the gRPC port keeps connections, and how many calls each may have open.
        public var grpc: GRPCConnectionPolicy
        /// How many verified tokens to remember (0 verifies every request's signature).
        public var tokenCacheCapacity: Int
        /// The stand-ins for what Fleet Engine computes (the speed of ETAs).
        public var service: OnDemandService.Configuration
        /// The web origins (`scheme://host:port`, or `*`) whose pages may call the API from the browser (CORS);
        /// none by default.
        public var allowedOrigins: [String]
        /// How long `/readyz` (and the gRPC health status) waits for each check before it counts as failing: below
        /// the 1 s after which orchestrators' probes give up by default (Kubernetes `timeoutSeconds: 1`), so a
        /// database that does not answer shows as 503 with its reason rather than as a probe timeout.
        public var readinessTimeout: Duration
        /// How many request-log entries to keep (the oldest go first), served by Cloud Logging's
        /// `POST /v2/entries:list`; 0 turns the log off (see <doc:RequestLog>).
        public var requestLogCapacity: Int
        /// How long a request-log entry is kept, on the emulator's clock.
        public var requestLogRetention: Duration
        /// Whether the test controls are served under `/emulator/v1/` (reset; see <doc:TestControls>). Off by
        /// default: they delete data, for a server token of the provider.
        public var testControls: Bool

        public init(
            limits: ServerLimits = ServerLimits(),
            tokenCacheCapacity: Int = 100_000,
            service: OnDemandService.Configuration = .init(),
            allowedOrigins: [String] = [],
            grpc: GRPCConnectionPolicy = GRPCConnectionPolicy(),
            readinessTimeout: Duration = .milliseconds(800),
            requestLogCapacity: Int = 100_000,
            requestLogRetention: Duration = .seconds(30 * 24 * 3600),
            testControls: Bool = false
        ) {
            self.testControls = testControls
            self.requestLogCapacity = requestLogCapacity
            self.requestLogRetention = requestLogRetention
            self.limits = limits
            self.grpc = grpc
            self.tokenCacheCapacity = tokenCacheCapacity
            self.service = service
            self.allowedOrigins = allowedOrigins
            self.readinessTimeout = readinessTimeout
        }
    }

    /// The name of the emulator's SQLite file in a data directory.
    public static let databaseFileName = "fleet-engine.sqlite"

    public let configuration: Configuration
    /// Where both APIs' vehicles, trips and tasks live.
    package let store: any EmulatorStore
    /// Verifies bearer tokens; shared by every connection.
    public let authenticator: TokenAuthenticator
    /// The Prometheus metrics served at `GET /metrics`.
    public let metrics: EmulatorMetrics
    /// The RPCs, shared by both transports.
    public let service: OnDemandService
    /// The Deliveries API's RPCs, shared by both transports.
    public let deliveries: DeliveryService
    /// The REST API.
    public let router: Router<EmulatorRequestContext>
    /// The local stand-in for Google's IAM and metadata server, when asked for: served only by
    /// ``iamApplication(host:port:logger:onServerRunning:)``, never on the API's port.
    public let iam: LocalIAM?
    /// Reports the server not ready once it begins shutting down (see ``services(host:port:grpcPort:iamPort:drainPeriod:logger:onServerRunning:onGRPCServerRunning:)``).
    package let drain = ShutdownDrain()
    private let keyRefresher: KeyRefresher?
    private let clock: any WallClock
    /// The request log, unless it is off.
    let requestLog: RequestLog?

    /// Loads the trusted keys (fetching JWK sets served by URL) and builds the router.
    ///
    /// - Parameters:
    ///   - configuration: where to listen, limits, and the token cache.
    ///   - trust: which service accounts to trust.
    ///   - store: where both APIs' vehicles, trips and tasks live.
    ///   - iam: the local stand-in for Google's IAM and metadata server, for keyless signing on a laptop; nil (the
    ///     default) for none. It is served only by ``iamApplication(host:port:logger:onServerRunning:)``.
    ///   - clock: the clock for token checks and server-set times.
    public init(
        configuration: Configuration = Configuration(),
        trust: TrustConfiguration,
        store: some EmulatorStorage,
        iam: LocalIAM? = nil,
        clock: any WallClock = .system
    ) async throws {
        var urls: [String: String] = [:]
        for entry in trust.serviceAccounts where entry.keySource.isURL {
            urls[entry.account.email] = entry.keySource.location
        }
        self.init(
            configuration: configuration,
            accounts: try await trust.loadAccounts(),
            keyURLs: urls,
            store: store,
            iam: iam,
            clock: clock
        )
    }

    /// Builds the router for accounts whose keys are already loaded.
    ///
    /// - Parameters:
    ///   - configuration: where to listen, limits, and the token cache.
    ///   - accounts: the trusted accounts and their keys.
    ///   - keyURLs: the JWK set URL of each account (by email) whose keys are refetched on an unknown `kid`.
    ///   - store: where both APIs' vehicles, trips and tasks live.
    ///   - iam: the stand-in for Google's IAM and metadata server, if any (served on a listener of its own).
    ///   - clock: the clock for token checks and server-set times.
    public init(
        configuration: Configuration = Configuration(),
        accounts: [(TrustedServiceAccount, [RSAVerificationKey])],
        keyURLs: [String: String] = [:],
        store: some EmulatorStorage,
        iam: LocalIAM? = nil,
        clock: any WallClock = .system
    ) {
        let metrics = EmulatorMetrics()
        let authenticator = TokenAuthenticator(
            accounts: accounts,
            cacheCapacity: configuration.tokenCacheCapacity,
            clock: clock,
            onRejection: { metrics.tokenRejected(reason: $0) },
            onAuthentication: { metrics.tokenAuthenticated(in: $0, cached: $1) }
        )
        let store = store.emulatorStore.store
        let service = OnDemandService(store: store, clock: clock, configuration: configuration.service)
        let deliveries = DeliveryService(store: store, clock: clock, speed: configuration.service.speed)
        let refresher = keyURLs.isEmpty ? nil : KeyRefresher(urls: keyURLs, clock: clock)
        let requestLog =
            configuration.requestLogCapacity > 0
            ? RequestLog(
                configuration: RequestLog.Configuration(
                    capacity: configuration.requestLogCapacity,
                    retention: configuration.requestLogRetention
                ),
                store: store,
                clock: clock,
                metrics: metrics,
                messageTypes: FleetEngineRPCs(vehicles: service, deliveries: deliveries).messageTypes,
                accountOf: { authenticator.account($0) }
            ) : nil
        self.requestLog = requestLog
        self.configuration = configuration
        self.store = store
        self.authenticator = authenticator
        self.metrics = metrics
        self.service = service
        self.clock = clock
        self.deliveries = deliveries
        self.keyRefresher = refresher
        self.iam = iam
        self.router = FleetEngineEmulator.makeRouter(
            authenticator: authenticator,
            service: service,
            deliveries: deliveries,
            keyRefresher: refresher,
            metrics: metrics,
            maximumBodySize: configuration.limits.maximumBodySize,
            allowedOrigins: configuration.allowedOrigins,
            readinessTimeout: configuration.readinessTimeout,
            drain: drain,
            requestLog: requestLog,
            controls: configuration.testControls ? store : nil
        )
    }

    /// The request log's writer, for a caller that runs the listeners without `services(…)` (a benchmark); nil
    /// when the log is off.
    package func requestLogService(logger: Logger) -> (any Service)? {
        requestLog.map { $0.service(clock: clock, logger: logger) }
    }

    /// The HTTP/1.1 server for the API, with the configured limits.
    ///
    /// - Parameters:
    ///   - host: the address to listen on.
    ///   - port: the port (0 picks a free one).
    ///   - logger: Hummingbird's logger (silent by default).
    ///   - onServerRunning: called once it listens, with its port.
    public func application(
        host: String = "127.0.0.1",
        port: Int = 8787,
        logger: Logger = .silent(label: "fleetauth.emulator"),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        application(host: host, port: port, logger: logger, certificate: nil, onServerRunning: onServerRunning)
    }

    /// The API over HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with `certificate`, or plain HTTP/1.1 without.
    package func application(
        host: String,
        port: Int,
        logger: Logger,
        certificate: ServerCertificate?,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void
    ) -> some ApplicationProtocol {
        ServerApplication.make(
            router: router,
            serverName: "fleetauth-emulator",
            host: host,
            port: port,
            limits: configuration.limits,
            logger: logger,
            certificate: certificate,
            onServerRunning: onServerRunning
        )
    }

    /// A listener of its own serving every metric, the restricted rejections by reason included, at `GET /metrics`
    /// without credentials (see ``EmulatorMetrics``): bind it where only the operator's scraper reaches (loopback by
    /// default).
    public func metricsApplication(
        host: String = "127.0.0.1",
        port: Int,
        logger: Logger = .silent(label: "fleetauth.emulator"),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        ServerApplication.make(
            router: FleetEngineEmulator.makeMetricsRouter(metrics: metrics),
            serverName: "fleetauth-emulator-metrics",
            host: host,
            port: port,
            limits: configuration.limits,
            logger: logger,
            onServerRunning: onServerRunning
        )
    }

    /// The listener of the local IAM and metadata server stand-ins (``LocalIAM``): loopback only, since its metadata
    /// route hands an access token to any caller. A host that is not loopback, or an emulator built without `iam`,
    /// is a ``LocalIAMError``.
    public func iamApplication(
        host: String = "127.0.0.1",
        port: Int,
        logger: Logger = .silent(label: "fleetauth.emulator"),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) throws(LocalIAMError) -> some ApplicationProtocol {
        guard let iam else { throw LocalIAMError("this emulator was built without the IAM stand-in") }
        guard LocalIAM.isLoopback(host) else {
            throw LocalIAMError(
                "the IAM and metadata server stand-ins bind loopback only (127.0.0.1 or ::1), not \(host): they hand out access tokens to any caller"
            )
        }
        let router = Router()
        IAMRoutes(iam: iam, maximumBodySize: configuration.limits.maximumBodySize).register(on: router)
        return ServerApplication.make(
            router: router,
            serverName: "fleetauth-emulator-iam",
            host: host,
            port: port,
            limits: configuration.limits,
            logger: logger,
            onServerRunning: onServerRunning
        )
    }

    /// The gRPC server: `maps.fleetengine.v1.VehicleService` and `TripService` over plaintext HTTP/2 on
    /// `host:port` (0 picks a free one, passed to `onServerRunning`), with request messages limited like REST
    /// bodies.
    @available(FleetAuthGRPC, *)
    public func grpcServer(
        host: String = "127.0.0.1",
        port: Int = 8786,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> GRPCServerService {
        grpcServer(host: host, port: port, certificate: nil, onServerRunning: onServerRunning)
    }

    /// The gRPC server over TLS with `certificate` (ALPN h2), or plaintext HTTP/2 without.
    @available(FleetAuthGRPC, *)
    package func grpcServer(
        host: String,
        port: Int,
        certificate: ServerCertificate?,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void
    ) -> GRPCServerService {
        GRPCServerService(
            rpcs: FleetEngineGRPCService(
                rpcs: FleetEngineRPCs(vehicles: service, deliveries: deliveries),
                call: RPCCall(
                    pipeline: RPCPipeline(
                        authenticator: authenticator,
                        refresher: keyRefresher,
                        metrics: metrics,
                        requestLog: requestLog
                    ),
                    maximumMessageSize: configuration.limits.maximumBodySize
                )
            ),
            host: host,
            port: port,
            limits: configuration.limits,
            policy: configuration.grpc,
            readiness: FleetEngineEmulator.readiness(
                authenticator: authenticator,
                store: store,
                timeout: configuration.readinessTimeout,
                drain: drain
            ),
            certificate: certificate,
            onServerRunning: onServerRunning
        )
    }

    /// Everything to run, in the order a `ServiceGroup` needs it: the store (closed last), the REST server, the
    /// gRPC server when `grpcPort` is given (and the platform has gRPC: macOS 15, iOS 18 or Linux), and the shutdown
    /// drain (stopped first: for `drainPeriod` after a graceful shutdown begins, `/readyz` answers 503 and gRPC health
    /// NOT_SERVING while every request is still answered; then the listeners close).
    ///
    /// - Parameters:
    ///   - host: the address both listen on.
    ///   - port: the REST port (0 picks a free one).
    ///   - grpcPort: the gRPC port (0 picks a free one), or nil for REST alone.
    ///   - iamPort: the loopback port of the IAM and metadata server stand-ins (0 picks a free one), or nil for
    ///     none; needs ``iam``.
    ///   - drainPeriod: how long the server reports not ready, still answering, before its listeners close.
    ///   - logger: Hummingbird's logger (silent by default).
    ///   - onServerRunning: called once the REST server listens, with its port.
    ///   - onGRPCServerRunning: called once the gRPC server listens, with its port.
    public func services(
        host: String = "127.0.0.1",
        port: Int = 8787,
        grpcPort: Int? = nil,
        iamPort: Int? = nil,
        drainPeriod: Duration = .zero,
        logger: Logger = .silent(label: "fleetauth.emulator"),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in },
        onGRPCServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) throws(LocalIAMError) -> [any Service] {
        // A listener that cannot be bound fails its service with a ListenerError naming it.
        let rest = Listener(name: "the emulator's REST port", host: host, port: port)
        let grpc = Listener(name: "the emulator's gRPC port", host: host, port: grpcPort ?? 0)
        let iamListener = Listener(name: "the IAM stand-in's port", host: "127.0.0.1", port: iamPort ?? 0)
        let startup = ListenerStartup(
            [rest] + (grpcPort == nil ? [] : [grpc]) + (iamPort == nil ? [] : [iamListener])
        ) { _ in }
        // The request log's writer right after the store: services stop in reverse order, so it writes the last
        // calls' entries once the listeners have closed, and before the store closes.
        var services: [any Service] =
            [store] + [requestLogService(logger: logger)].compactMap { $0 } + [
                startup.guarding(
                    application(host: host, port: port, logger: logger) { port in
                        await startup.bound(rest, port: port)
                        await onServerRunning(port)
                    },
                    rest
                )
            ]
        if let grpcPort, #available(FleetAuthGRPC , *) {
            services.append(
                startup.guarding(
                    grpcServer(host: host, port: grpcPort) { port in
                        await startup.bound(grpc, port: port)
                        await onGRPCServerRunning(port)
                    },
                    grpc
                )
            )
        }
        if let iamPort {
            services.append(
                startup.guarding(
                    try iamApplication(host: "127.0.0.1", port: iamPort, logger: logger) { port in
                        await startup.bound(iamListener, port: port)
                    },
                    iamListener
                )
            )
        }
        services.append(drain.service(period: drainPeriod, clock: clock))
        return services
    }
}
