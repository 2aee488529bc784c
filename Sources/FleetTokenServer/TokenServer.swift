public import FleetAuthCore
import FleetAuthDatabase
public import FleetAuthJWT
public import FleetAuthServerCore
public import FleetAuthServerSupport
import Foundation
public import Hummingbird
public import Logging
import NIOConcurrencyHelpers
public import ServiceLifecycle

/// "Your server": app users log in, and get Fleet Engine tokens for what they were granted.
///
/// ```swift
/// let store = try SQLiteTokenServerStore(path: "fleetauth-data/" + TokenServer.databaseFileName)
/// let server = try await TokenServer(configuration: .init(dataDirectory: "fleetauth-data"), store: store)
/// try await ServiceGroup(services: server.services(), gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
///
/// Once listening, the server writes `DATA/emulator-trust.json`, the trust file that makes a Fleet Engine emulator
/// trust its accounts by JWK set URL. While it runs, retired keys are pruned once every token they signed has
/// expired.
public struct TokenServer {
    /// How the token server listens, signs and throttles.
    public struct Configuration: Sendable, Hashable {
        /// The token server's request limits unless told otherwise: bodies are small JSON (64 KiB at most).
        public static let defaultLimits = ServerLimits(maximumBodySize: 64 * 1024)

        /// Where generated keys (`keys/`) and the emulator's trust file are written.
        public var dataDirectory: String
        /// The Google Cloud project (Fleet Engine provider) of generated keys.
        public var project: String
        /// Existing service-account key files to use for some families instead of generating keys.
        public var keyFiles: [TokenFamily: String]
        /// When set, signing keys are kept in the store sealed under it (required for several instances on one
        /// database); otherwise they are files under `dataDirectory/keys`.
        public var keyEncryptionKey: KeyEncryptionKey?
        /// The bcrypt cost of new password hashes.
        public var bcryptCost: UInt8
        /// `exp − iat` of issued tokens, in seconds (at most 3600).
        public var tokenLifetime: Int64
        /// How long a login session lasts.
        public var sessionLifetime: Duration
        /// The failed-login throttle.
        public var throttle: LoginThrottle.Policy
        /// How fast a user may mint tokens (per resource, and across its resources).
        public var mintRate: MintRateLimiter.Policy
        /// Header, body and idle limits (request bodies are small JSON: 64 KiB by default).
        public var limits: ServerLimits
        /// How often retired keys are checked for pruning.
        public var keyPruneInterval: Duration
        /// How long audit entries are kept (30 days by default); older ones are pruned at start and then every
        /// ``retentionInterval``, with expired sessions and forgotten login failures.
        public var auditRetention: Duration
        /// How often pruning runs.
        public var retentionInterval: Duration
        /// The base URL clients and the emulator reach this server at, when not its listening address (a load
        /// balancer in front of several instances); the emulator's trust file names its JWK set URLs under it.
        public var publicURL: String?
        /// The OpenID Providers whose ID tokens log users in (`POST /v1/sessions {"idToken"}`); none by default.
        public var openIDProviders: [OpenIDProviderConfiguration]
        /// The role of a user created at the first ID-token login of an identity no user is linked to (driver or
        /// consumer, without grants); nil refuses such logins.
        public var openIDAutoCreateRole: AppUserRole?
        /// The shortest time between two fetches of a provider's JWK set for tokens naming an unknown `kid`.
        public var openIDMinimumRefetchInterval: Duration
        /// The Fleet Engine REST base URL the browser pages call (``WebAppSettings/fleetEngineURL``).
        public var fleetEngineURL: String?
        /// A map tile URL template for the browser pages used online (``WebAppSettings/tileURL``).
        public var tileURL: String?
        /// How long each `/readyz` check (the store, signing, OpenID keys) may take before it counts as failing:
        /// under the 1 s after which orchestrators' probes give up by default, so they see the 503 and its reason.
        public var readinessTimeout: Duration
        /// The load balancers and proxies in front of the server, whose `Forwarded` or `X-Forwarded-For` names the
        /// client the login throttle counts (``TrustedProxies``); none by default, so every client is its TCP peer.
        public var trustedProxies: TrustedProxies

        public init(
            dataDirectory: String,
            project: String = "demo-project",
            keyFiles: [TokenFamily: String] = [:],
            keyEncryptionKey: KeyEncryptionKey? = nil,
            bcryptCost: UInt8 = 12,
            tokenLifetime: Int64 = 3600,
            sessionLifetime: Duration = .seconds(12 * 3600),
            throttle: LoginThrottle.Policy = LoginThrottle.Policy(),
            mintRate: MintRateLimiter.Policy = MintRateLimiter.Policy(),
            limits: ServerLimits = defaultLimits,
            keyPruneInterval: Duration = .seconds(60),
            auditRetention: Duration = .seconds(30 * 86_400),
            retentionInterval: Duration = .seconds(60),
            publicURL: String? = nil,
            openIDProviders: [OpenIDProviderConfiguration] = [],
            openIDAutoCreateRole: AppUserRole? = nil,
            openIDMinimumRefetchInterval: Duration = .seconds(10),
            fleetEngineURL: String? = nil,
            tileURL: String? = nil,
            readinessTimeout: Duration = .milliseconds(800),
            trustedProxies: TrustedProxies = .none
        ) {
            self.dataDirectory = dataDirectory
            self.project = project
            self.keyFiles = keyFiles
            self.keyEncryptionKey = keyEncryptionKey
            self.bcryptCost = bcryptCost
            self.tokenLifetime = tokenLifetime
            self.sessionLifetime = sessionLifetime
            self.throttle = throttle
            self.mintRate = mintRate
            self.limits = limits
            self.keyPruneInterval = keyPruneInterval
            self.auditRetention = auditRetention
            self.retentionInterval = retentionInterval
            self.publicURL = publicURL
            self.openIDProviders = openIDProviders
            self.openIDAutoCreateRole = openIDAutoCreateRole
            self.openIDMinimumRefetchInterval = openIDMinimumRefetchInterval
            self.fleetEngineURL = fleetEngineURL
            self.tileURL = tileURL
            self.readinessTimeout = readinessTimeout
            self.trustedProxies = trustedProxies
        }
    }

    /// The name of the token server's SQLite file in a data directory.
    public static let databaseFileName = "token-server.sqlite"
    /// The name of the trust file written for the emulator in the data directory.
    public static let trustFileName = "emulator-trust.json"

    public let configuration: Configuration
    /// Users, grants, sessions, key records and audit.
    public let store: any TokenServerStorage
    /// Passwords, sessions and throttling.
    public let login: LoginService
    /// Users and grants.
    public let users: UserDirectory
    /// The signing keys.
    public let keyring: Keyring
    /// Where the browser pages (`/app/trip/{tripId}`, `/app/shipment/{trackingId}`, `/app/console`) find Fleet
    /// Engine.
    public let webApp: WebAppSettings
    /// Tokens issued and token requests refused, served to operators at `GET /v1/admin/metrics`.
    public let metrics: TokenServerMetrics
    /// The API.
    public let router: Router<TokenServerRequestContext>
    /// Reports the server not ready once it begins shutting down (see ``services(host:port:drainPeriod:logger:onServerRunning:)``).
    package let drain = ShutdownDrain()
    private let clock: any WallClock

    /// Opens the keyring (creating missing keys under `dataDirectory/keys`) and builds the router.
    ///
    /// - Parameters:
    ///   - configuration: listening, keys, lifetimes and throttling.
    ///   - store: users, grants, sessions, key records and audit.
    ///   - clock: the clock for tokens, sessions, throttling, key retirement and OpenID key refetches.
    ///   - keyGenerator: how a family's first key is made (by default a new RSA-2048 key).
    ///   - auditLogger: where every issued token is logged, without the token (silent by default; the audit table
    ///     records them either way).
    ///   - logger: where refused ID tokens (at `info`), unreachable OpenID Providers and signers that fail (at
    ///     `error`) are logged.
    ///   - keylessSigners: the families that sign through IAM or a PKCS#11 token instead of a key the server holds.
    public init(
        configuration: Configuration,
        store: any TokenServerStorage,
        keylessSigners: [TokenFamily: KeylessSigner] = [:],
        clock: any WallClock = .system,
        keyGenerator: KeyGenerator = .fresh,
        auditLogger: Logger = .silent(label: "fleetauth.token-server.audit"),
        logger: Logger = .silent(label: "fleetauth.token-server")
    ) async throws {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        try PrivateFiles.directory(configuration.dataDirectory)
        let hasher = PasswordHasher(cost: configuration.bcryptCost)
        // Ready before the first login: an unknown user's check costs from the first login on what a known one's does.
        try await hasher.prepareDummy(cost: configuration.bcryptCost)
        let federation =
            configuration.openIDProviders.isEmpty
            ? nil
            : try OpenIDFederation(
                providers: configuration.openIDProviders,
                autoCreateRole: configuration.openIDAutoCreateRole,
                minimumRefetchInterval: configuration.openIDMinimumRefetchInterval,
                clock: clock,
                logger: logger
            )
        login = LoginService(
            users: store,
            sessions: store,
            hasher: hasher,
            sessionLifetime: configuration.sessionLifetime,
            throttle: LoginThrottle(policy: configuration.throttle, store: store),
            federation: federation,
            identities: store,
            clock: clock,
            logger: logger
        )
        users = UserDirectory(store: store, hasher: hasher, clock: clock)
        keyring = try await Keyring(
            store: store,
            keyDirectory: configuration.dataDirectory + "/keys",
            project: configuration.project,
            keyFiles: configuration.keyFiles,
            keyEncryptionKey: configuration.keyEncryptionKey,
            keyless: keylessSigners,
            tokenLifetime: configuration.tokenLifetime,
            clock: clock,
            keyGenerator: keyGenerator
        )
        webApp = WebAppSettings(fleetEngineURL: configuration.fleetEngineURL, tileURL: configuration.tileURL)
        metrics = TokenServerMetrics()
        router = Router(context: TokenServerRequestContext.self)
        ServerTracing.addRequestSpans(to: router)
        WebAppRoutes(settings: webApp, project: configuration.project).register(on: router)
        TokenServerRoutes(
            login: login,
            users: users,
            keyring: keyring,
            audit: GroupCommitAuditLog(store),
            mintLimiter: MintRateLimiter(policy: configuration.mintRate, clock: clock),
            metrics: metrics,
            clock: clock,
            auditLogger: auditLogger,
            logger: logger,
            maximumBodySize: configuration.limits.maximumBodySize,
            trustedProxies: configuration.trustedProxies
        ).register(on: router)
        readiness.register(on: router)
    }

    /// Prunes audit entries older than ``Configuration/auditRetention``, expired sessions and forgotten login
    /// failures: at start, then every ``Configuration/retentionInterval``, in batches of `batch` rows (each a short
    /// transaction of its own, so token requests between them never wait for the whole pruning).
    ///
    /// The audit cutoff never moves faster than time passes on the clock's monotonic half: after the time of day
    /// steps forward (by more than the retention, it would have emptied the log at once), entries are pruned as
    /// they come of age by elapsed time, and the step is logged once. The audit log errs on the side of keeping.
    package func retentionPruner(batch: Int = 1_000, logger: Logger = .silent(label: "fleetauth.token-server"))
        -> PeriodicTask
    {
        let store = self.store
        let clock = self.clock
        let retention = configuration.auditRetention
        // The last cutoff and when it was taken, on the monotonic stopwatch.
        let previous = NIOLockedValueBox<(cutoff: Date, at: Double, warned: Bool)?>(nil)
        let elapsed = clock.stopwatch()
        return PeriodicTask(
            name: "audit retention",
            interval: configuration.retentionInterval,
            immediately: true,
            clock: clock,
            logger: logger
        ) {
            let now = clock.currentDate
            let cutoff = previous.withLockedValue { previous in
                var cutoff = now.addingTimeInterval(-retention.timeInterval)
                var warned = previous?.warned ?? false
                if let (lastCutoff, at, _) = previous {
                    let bound = lastCutoff.addingTimeInterval(elapsed() - at)
                    if cutoff > bound.addingTimeInterval(1) {
                        if !warned {
                            logger.warning(
                                "the time of day moved ahead of elapsed time; the audit log is pruned only as time passes",
                                metadata: .fleetauth([
                                    "seconds": .stringConvertible(Int(cutoff.timeIntervalSince(bound)))
                                ])
                            )
                            warned = true
                        }
                        cutoff = bound
                    }
                }
                previous = (cutoff, elapsed(), warned)
                return cutoff
            }
            var audit = 0
            var expired = 0
            while !Task.isCancelled {
                let removed = try await store.pruneAudit(issuedBefore: cutoff, limit: batch)
                audit += removed
                if removed < batch { break }
                await Task.yield()
            }
            while !Task.isCancelled {
                let removed = try await store.pruneExpired(at: now, limit: batch)
                expired += removed
                if removed < batch { break }
                await Task.yield()
            }
            if audit + expired > 0 {
                logger.info(
                    "pruned the audit log, sessions and login failures",
                    metadata: .fleetauth(["audit": .stringConvertible(audit), "expired": .stringConvertible(expired)])
                )
            }
        }
    }

    /// What `GET /readyz` checks: the store answers (and is migrated), every token family can sign, and every
    /// OpenID Provider's keys are loaded.
    package var readiness: Readiness {
        let store = self.store
        let keyring = self.keyring
        let federation = login.federation
        var components: [Readiness.Component] = [
            drain.component,
            .probing("store") {
                if let problem = await storageProblem(of: store) { throw StoreError.unavailable(problem) }
                _ = try await store.signingKeys()
            },
            .init("signing") {
                let problems = await keyring.signingProblems()
                return problems.isEmpty ? nil : problems.map { "\($0): \($1)" }.joined(separator: "; ")
            },
        ]
        if let federation {
            components.append(
                .init("openid-keys") {
                    let missing = await federation.keyCounts().filter { $0.keys == 0 }.map(\.issuer)
                    return missing.isEmpty ? nil : "no signing keys loaded for " + missing.joined(separator: ", ")
                }
            )
        }
        return Readiness(components, timeout: configuration.readinessTimeout)
    }

    /// Adds an `operator` account with a random password when there are no users at all (a first start).
    /// Returns the password, to be shown once, or `nil` when users exist.
    public func createOperatorIfNoUsers() async throws -> String? {
        guard try await users.users().isEmpty else { return nil }
        let password = UserDirectory.generatePassword()
        try await users.addUser(AppUser(username: "operator", role: .operator), password: password)
        return password
    }

    /// The HTTP/1.1 server for the API, with the configured limits. Once it listens it writes the emulator's
    /// trust file for its address, then calls `onServerRunning` with its port.
    ///
    /// - Parameters:
    ///   - host: the address to listen on.
    ///   - port: the port (0 picks a free one).
    ///   - logger: Hummingbird's logger (silent by default).
    ///   - onServerRunning: called once it listens, with its port.
    public func application(
        host: String = "127.0.0.1",
        port: Int = 8788,
        logger: Logger = .silent(label: "fleetauth.token-server"),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        application(host: host, port: port, logger: logger, certificate: nil, onServerRunning: onServerRunning)
    }

    /// The API over HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with `certificate`, or plain HTTP/1.1 without; the trust
    /// file it writes names `https://` URLs with a certificate.
    package func application(
        host: String,
        port: Int,
        logger: Logger,
        certificate: ServerCertificate?,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void
    ) -> some ApplicationProtocol {
        let scheme = certificate == nil ? "http" : "https"
        let keyring = self.keyring
        let configuration = self.configuration
        return ServerApplication.make(
            router: router,
            serverName: "fleetauth-token-server",
            host: host,
            port: port,
            limits: configuration.limits,
            logger: logger,
            certificate: certificate
        ) { port in
            let trustPath = configuration.dataDirectory + "/" + Self.trustFileName
            do {
                let baseURL = configuration.publicURL ?? "\(scheme)://\(host):\(port)"
                try keyring.trustConfiguration(baseURL: baseURL).write(to: trustPath)
            } catch {
                logger.error(
                    "cannot write the emulator trust file",
                    metadata: .fleetauth(["path": .string(trustPath), "error": .string("\(error)")])
                )
            }
            await onServerRunning(port)
        }
    }

    /// Everything to run, in the order a `ServiceGroup` needs it: the store (closed last), the HTTP server, the
    /// key pruner, and the shutdown drain (stopped first: for `drainPeriod` after a graceful shutdown begins,
    /// `/readyz` answers 503 while every request is still answered; then the listener closes).
    public func services(
        host: String = "127.0.0.1",
        port: Int = 8788,
        drainPeriod: Duration = .zero,
        logger: Logger = .silent(label: "fleetauth.token-server"),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> [any Service] {
        let listener = Listener(name: "the token server's port", host: host, port: port)
        let startup = ListenerStartup([listener]) { _ in }
        return [
            store,
            startup.guarding(
                application(host: host, port: port, logger: logger) { port in
                    await startup.bound(listener, port: port)
                    await onServerRunning(port)
                },
                listener
            ),
            keyring.pruner(interval: configuration.keyPruneInterval, logger: logger),
            retentionPruner(logger: logger),
            drain.service(period: drainPeriod, clock: clock),
        ]
    }
}
