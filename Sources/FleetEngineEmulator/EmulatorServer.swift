public import FleetAuthJWT
public import Foundation
public import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore

/// Everything `fleetauth emulator` serves, assembled from a trust configuration and a store: the authenticator,
/// the metrics and the router, and an HTTP server with request limits. `fleetauth demo` and tests run it in process.
public struct EmulatorServer {
    /// Limits on what one client may send (`reference/jwt-security.md` D2, D4).
    public struct Limits: Sendable, Hashable {
        /// The largest single header line; a Fleet Engine token is at most 8 KB, so 16 KB leaves room.
        public var maximumHeaderFieldSize: Int = 16 * 1024
        /// The largest header section.
        public var maximumHeaderListSize: Int = 64 * 1024
        /// The most header fields in one request.
        public var maximumHeaderCount: Int = 100
        /// How long a connection may stay without a complete request before it is closed (slow clients).
        public var idleTimeout: Duration = .seconds(30)

        public init() {}
    }

    /// Verifies bearer tokens; shared by every connection.
    public let authenticator: TokenAuthenticator
    /// The Prometheus metrics served at `GET /metrics`.
    public let metrics: EmulatorMetrics
    /// The API.
    public let router: Router<EmulatorRequestContext>

    /// Loads the trusted keys (fetching JWK sets served by URL) and builds the router.
    ///
    /// - Parameters:
    ///   - configuration: which service accounts to trust.
    ///   - store: where vehicles and trips live.
    ///   - tokenCacheCapacity: how many verified tokens to remember (0 verifies every request's signature).
    ///   - now: the clock for token checks and server-set times.
    public init(
        configuration: TrustConfiguration,
        store: any FleetStore,
        tokenCacheCapacity: Int = 100_000,
        now: @escaping @Sendable () -> Date = { Date() }
    ) async throws {
        var urls: [String: String] = [:]
        for entry in configuration.serviceAccounts where entry.keySource.isURL {
            urls[entry.account.email] = entry.keySource.location
        }
        self.init(
            accounts: try await configuration.loadAccounts(), keyURLs: urls, store: store,
            tokenCacheCapacity: tokenCacheCapacity, now: now)
    }

    /// Builds the router for accounts whose keys are already loaded.
    ///
    /// - Parameters:
    ///   - accounts: the trusted accounts and their keys.
    ///   - keyURLs: the JWK set URL of each account (by email) whose keys are refetched on an unknown `kid`.
    ///   - store: where vehicles and trips live.
    ///   - tokenCacheCapacity: how many verified tokens to remember (0 verifies every request's signature).
    ///   - now: the clock for token checks and server-set times.
    public init(
        accounts: [(TrustedServiceAccount, [RSAVerificationKey])],
        keyURLs: [String: String] = [:],
        store: any FleetStore,
        tokenCacheCapacity: Int = 100_000,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let metrics = EmulatorMetrics()
        let authenticator = TokenAuthenticator(
            accounts: accounts,
            cacheCapacity: tokenCacheCapacity,
            now: now,
            onRejection: { metrics.tokenRejected(reason: $0) },
            onAuthentication: { metrics.tokenAuthenticated(in: $0, cached: $1) }
        )
        self.authenticator = authenticator
        self.metrics = metrics
        self.router = FleetEngineEmulator.makeRouter(
            authenticator: authenticator,
            store: store,
            keyRefresher: keyURLs.isEmpty ? nil : KeyRefresher(urls: keyURLs),
            metrics: metrics,
            now: now
        )
    }

    /// An HTTP/1.1 server for the API on `host:port` (port 0 picks a free one, passed to `onServerRunning`).
    public func application(
        host: String = "127.0.0.1",
        port: Int = 8787,
        limits: Limits = Limits(),
        logger: Logger = EmulatorServer.quietLogger(label: "fleetauth.emulator"),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Self.application(
            router: router,
            serverName: "fleetauth-emulator",
            host: host,
            port: port,
            limits: limits,
            logger: logger,
            onServerRunning: onServerRunning
        )
    }

    /// An HTTP/1.1 server for any router, with the same limits (the token server and benchmarks use it too).
    public static func application<Context: RequestContext>(
        router: Router<Context>,
        serverName: String,
        host: String,
        port: Int,
        limits: Limits = Limits(),
        logger: Logger,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol where Context.Source == ApplicationRequestContextSource {
        let http1 = HTTP1Channel.Configuration(
            idleTimeout: TimeAmount(limits.idleTimeout),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: limits.maximumHeaderFieldSize,
                maxHeaderListSize: limits.maximumHeaderListSize,
                maxHeaderFieldCount: limits.maximumHeaderCount
            )
        )
        return Application(
            router: router,
            server: .http1(configuration: http1),
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// A logger that reports warnings and errors only (every request would otherwise log a line).
    public static func quietLogger(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        return logger
    }
}
