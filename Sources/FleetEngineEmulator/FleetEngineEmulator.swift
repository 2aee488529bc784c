public import FleetAuthCore
import FleetAuthDatabase
import FleetAuthServerCore
public import FleetAuthServerSupport
import Foundation
public import Hummingbird

/// A local Fleet Engine: the v1 API over REST and gRPC, every call authorized by its JWT exactly as Fleet Engine
/// does.
public enum FleetEngineEmulator {
    /// The OpenAPI 3.1 description of the API (`Resources/openapi.yaml`), served at `GET /openapi.yaml`.
    public static let openAPIDocument: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return "" }
        return text
    }()

    /// The router of the emulator's API, ready to serve or to test in process.
    ///
    /// - Parameters:
    ///   - authenticator: verifies bearer tokens and knows the trusted service accounts.
    ///   - store: where vehicles and trips live.
    ///   - keyRefresher: refetches JWK sets served by URL when a token names an unknown key.
    ///   - metrics: the Prometheus metrics served at `GET /metrics`; wire the authenticator's hooks to it.
    ///   - maximumBodySize: the largest request body, in bytes (413 above it).
    ///   - clock: the clock for server-set times and estimates.
    ///   - configuration: the service's stand-ins for what Fleet Engine computes.
    ///   - allowedOrigins: the web origins whose pages may call the API from the browser (CORS); none by default.
    ///   - testControls: whether to serve the test controls under `/emulator/v1/` (<doc:TestControls>); off by
    ///     default.
    public static func makeRouter(
        authenticator: TokenAuthenticator,
        store: some EmulatorStorage,
        keyRefresher: KeyRefresher? = nil,
        metrics: EmulatorMetrics = EmulatorMetrics(),
        maximumBodySize: Int = ServerLimits().maximumBodySize,
        clock: any WallClock = .system,
        configuration: OnDemandService.Configuration = .init(),
        allowedOrigins: [String] = [],
        testControls: Bool = false
    ) -> Router<EmulatorRequestContext> {
        let store = store.emulatorStore.store
        return makeRouter(
            authenticator: authenticator,
            service: OnDemandService(store: store, clock: clock, configuration: configuration),
            deliveries: DeliveryService(store: store, clock: clock, speed: configuration.speed),
            keyRefresher: keyRefresher,
            metrics: metrics,
            maximumBodySize: maximumBodySize,
            allowedOrigins: allowedOrigins,
            controls: testControls ? store : nil
        )
    }

    static func metricsResponse(_ text: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }

    /// A router serving every metric, the restricted ones included, at `GET /metrics`: for a listener of its own on
    /// an address only the operator's scraper reaches.
    public static func makeMetricsRouter(metrics: EmulatorMetrics) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("metrics") { _, _ in metricsResponse(metrics.text) }
        return router
    }

    /// What `GET /readyz` checks: the store answers (its tables exist: it is migrated), and every trusted account
    /// has keys (a JWK set that could not be fetched leaves its account without).
    static func readiness(
        authenticator: TokenAuthenticator,
        store: any OnDemandStore,
        timeout: Duration = Readiness.defaultTimeout,
        drain: ShutdownDrain? = nil
    ) -> Readiness {
        Readiness(
            [
                .probing("store") {
                    if let problem = await storageProblem(of: store) { throw StoreError.unavailable(problem) }
                    _ = try await store.vehicle(provider: "readiness-probe", id: "readiness-probe")
                },
                .init("trusted-keys") {
                    let missing = authenticator.accountsWithoutKeys
                    return missing.isEmpty ? nil : "no keys loaded for " + missing.joined(separator: ", ")
                },
            ] + (drain.map { [$0.component] } ?? []),
            timeout: timeout
        )
    }

    /// The router of the emulator's REST API over `service`.
    static func makeRouter(
        authenticator: TokenAuthenticator,
        service: OnDemandService,
        deliveries: DeliveryService,
        keyRefresher: KeyRefresher?,
        metrics: EmulatorMetrics,
        maximumBodySize: Int,
        allowedOrigins: [String] = [],
        readinessTimeout: Duration = Readiness.defaultTimeout,
        drain: ShutdownDrain? = nil,
        requestLog: RequestLog? = nil,
        controls: (any EmulatorStore)? = nil
    ) -> Router<EmulatorRequestContext> {
        let router = Router(context: EmulatorRequestContext.self)
        ServerTracing.addRequestSpans(to: router)
        if !allowedOrigins.isEmpty { router.add(middleware: CORSMiddleware(origins: allowedOrigins)) }
        readiness(authenticator: authenticator, store: service.store, timeout: readinessTimeout, drain: drain)
            .register(on: router)
        router.add(middleware: MetricsMiddleware(metrics: metrics))
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: openAPIDocument))
            )
        }
        router.get("metrics") { request, _ in
            // Without credentials, what anyone may read; with a token that may list the whole fleet, everything.
            guard let authorization = request.headers[.authorization] else {
                return Self.metricsResponse(metrics.publicText)
            }
            let caller = try await authenticator.authenticate(authorization: authorization, refresher: keyRefresher)
            try AccessPolicy.check(
                account: caller.account,
                claims: caller.claims,
                method: .listVehicles,
                scope: .allVehicles,
                provider: caller.account.project
            )
            return Self.metricsResponse(metrics.text)
        }
        if let controls {
            ControlRoutes(
                store: controls,
                requestLog: requestLog,
                authenticator: authenticator,
                refresher: keyRefresher
            )
            .register(on: router)
        }
        if let requestLog {
            LoggingRoutes(log: requestLog, authenticator: authenticator, refresher: keyRefresher)
                .register(on: router, maximumBodySize: maximumBodySize)
        }
        RESTRoutes.register(
            FleetEngineRPCs(vehicles: service, deliveries: deliveries),
            through: RPCPipeline(
                authenticator: authenticator,
                refresher: keyRefresher,
                metrics: metrics,
                requestLog: requestLog
            ),
            on: router,
            maximumBodySize: maximumBodySize
        )
        return router
    }
}
