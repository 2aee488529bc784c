import ArgumentParser
import FleetAuthCore
import FleetAuthDatabase
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerSupport
import FleetTokenServer
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// Where the token server keeps its state, shared by `token-server`, `users` and `keys rotate`: SQLite in the data
/// directory, or PostgreSQL with `--database` (or `DATABASE_URL`), where the signing keys are sealed under the
/// key-encryption key.
struct TokenServerDataOptions: ParsableArguments {
    @Option(help: "Token server data directory (SQLite database, generated keys, the emulator's trust file).")
    var data: String = "fleetauth-data"
    @Option(
        help: """
            PostgreSQL for users, grants, sessions, audit, throttling and signing keys: \
            postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (or DATABASE_URL). Needs a key-encryption key.
            """
    )
    var database: String?
    @Option(
        help: """
            File with the key-encryption key that seals signing keys in the database (32 bytes, base64; create one \
            with `fleetauth keys create-kek`). Or set \(KeyEncryptionKey.environmentVariable).
            """
    )
    var keyEncryptionKeyFile: String?

    var databasePath: String { data + "/" + TokenServer.databaseFileName }

    /// The key-encryption key from `--key-encryption-key-file` or the environment, if any.
    func keyEncryptionKey() throws -> KeyEncryptionKey? {
        do {
            if let keyEncryptionKeyFile { return try KeyEncryptionKey(contentsOf: keyEncryptionKeyFile) }
            if let text = ProcessInfo.processInfo.environment[KeyEncryptionKey.environmentVariable], !text.isEmpty {
                return try KeyEncryptionKey(
                    base64: text,
                    source: "The key-encryption key in \(KeyEncryptionKey.environmentVariable)"
                )
            }
            return nil
        } catch {
            throw CLIError(error.message)
        }
    }

    /// The PostgreSQL URL, if the state is in PostgreSQL.
    func postgresURL() throws -> PostgresURL? { try DatabaseOption.postgres(database) }

    /// Runs `body` with the store: PostgreSQL (migrated; its pool closes when `body` returns) or the data
    /// directory's SQLite file. `forServer`: the file is created if missing and PostgreSQL needs a key-encryption
    /// key; otherwise a missing file is an error naming the command to run first. `timeouts` bound PostgreSQL's calls.
    func withStore<T>(
        forServer: Bool,
        timeouts: DatabaseTimeouts = .requests,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (any TokenServerStorage) async throws -> T
    ) async throws -> T {
        if let url = try postgresURL() {
            guard try !forServer || keyEncryptionKey() != nil else {
                throw CLIError(
                    "With --database the signing keys are kept in PostgreSQL, sealed: give --key-encryption-key-file "
                        + "FILE or \(KeyEncryptionKey.environmentVariable) (create one with `fleetauth keys create-kek "
                        + "--out FILE`; every instance needs the same key)."
                )
            }
            return try await reportingRefusals {
                try await PostgresTokenServerStore.withConnected(url, timeouts: timeouts) { store in
                    try await body(store)
                }
            }
        }
        if !forServer, !FileManager.default.fileExists(atPath: databasePath) {
            throw CLIError(
                "No token server data in \(data). Start `fleetauth serve --data \(data)` or `fleetauth token-server "
                    + "--data \(data)` once first (or give the --data of the one running)."
            )
        }
        try prepareDataDirectory(data)
        return try await body(try SQLiteTokenServerStore(path: databasePath))
    }

    /// Runs `body` with the existing store.
    func withExistingStore<T>(_ body: (any TokenServerStorage) async throws -> T) async throws -> T {
        try await withStore(forServer: false, body)
    }

    /// Runs `body` with the users and grants of the existing store.
    func withDirectory<T>(bcryptCost: UInt8 = 12, _ body: (UserDirectory) async throws -> T) async throws -> T {
        try await withExistingStore { store in
            try await body(UserDirectory(store: store, hasher: PasswordHasher(cost: bcryptCost)))
        }
    }
}

/// Runs `body`, reporting a refusal by the server's rules or its store as a CLI error (its message, exit 1).
func reportingRefusals<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> T
) async throws -> T {
    do {
        return try await body()
    } catch let error as GoogleAPIError {
        throw CLIError(error.message)
    } catch let error as StoreError {
        throw CLIError(error.message)
    }
}

struct TokenServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token-server",
        abstract: "Run the token server: app-user login, per-user grants, Fleet Engine tokens on demand.",
        discussion: """
            The first start creates one service-account key per token family (driver, consumer, server, delivery, \
            delivery-server, reader) \
            unless key files are given, and an operator account whose password is printed once. State is kept in \
            DATA/token-server.sqlite with the keys under DATA/keys, or with --database in PostgreSQL, where several \
            instances share users, sessions, lockouts and keys (sealed under the key-encryption key). It writes \
            DATA/emulator-trust.json, which `fleetauth emulator --trust` reads to trust this server's keys by JWK \
            set URL (so rotations reach the emulator without a restart).
            """
    )

    @OptionGroup var storage: TokenServerDataOptions
    @OptionGroup var keyless: KeylessSignerOptions
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free one).") var port: Int = 8788
    @Option(help: "Google Cloud project (Fleet Engine provider) of generated keys.") var project: String =
        "demo-project"
    @Option(help: "Service-account key file for driver tokens (instead of a generated key).") var driverKey: String?
    @Option(help: "Service-account key file for consumer tokens.") var consumerKey: String?
    @Option(help: "Service-account key file for server tokens.") var serverKey: String?
    @Option(help: "Service-account key file for delivery tokens.") var deliveryKey: String?
    @Option(help: "Service-account key file for delivery server tokens.") var deliveryServerKey: String?
    @Option(help: "Service-account key file for fleet-reader tokens (an account whose role only reads).")
    var readerKey: String?
    @Option(help: "bcrypt cost of new password hashes (10–16).") var bcryptCost: UInt8 = 12
    @Option(help: "Lifetime of issued Fleet Engine tokens in seconds (60–3600).") var tokenLifetime: Int64 = 3600
    @Option(
        help: """
            Tokens per minute a user may mint for one vehicle, trip or other resource, sustained (10 times that             across all of its resources); beyond it 429 with Retry-After. 0 turns the limit off.
            """
    )
    var mintRate: Double = 6
    @Option(help: "Tokens a user may mint at once for one resource before --mint-rate applies.") var mintBurst: Int = 10
    @Option(
        help: """
            The URL clients and the emulator reach this server at, when it differs from the listening address \
            (a load balancer in front of several instances); used in the emulator's trust file.
            """
    )
    var publicURL: String?
    @Option(
        help: """
            An OpenID Provider whose ID tokens log users in (POST /v1/sessions {"idToken": …}): its issuer, exactly \
            as the tokens' iss reads (https://, or http:// on loopback). Repeat with --oidc-audience, in pairs.
            """
    )
    var oidcIssuer: [String] = []
    @Option(help: "The client ID the ID tokens of the --oidc-issuer in the same position must be for.")
    var oidcAudience: [String] = []
    @Option(
        help: """
            Create a user of this role (driver or consumer, without grants) at the first ID-token login of an \
            identity no user is linked to; without it such a login is refused like a wrong password.
            """
    )
    var oidcAutoCreate: String?
    @Option(
        help: """
            The Fleet Engine (emulator) REST base URL the browser pages /app/trip/{tripId}, \
            /app/shipment/{trackingId} and /app/console call; it must allow this server's origin (fleetauth \
            emulator --allow-origin).
            """
    )
    var emulatorURL: String?
    @Option(help: "A map tile URL template ({z}/{x}/{y}) for the browser pages used online; default: no tiles.")
    var tileURL: String?
    @OptionGroup var tls: TLSOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var shutdown: ShutdownOptions
    @OptionGroup var databaseTimeouts: DatabaseTimeoutOptions
    @OptionGroup var connectionLimits: ConnectionLimitOptions
    @Option(
        help: """
            Seconds each /readyz check (store, signing, OpenID keys) may take before it counts as failing; under the \
            1 s orchestrators' probes wait by default, so they see the 503 and its reason.
            """
    )
    var readinessTimeout: Double = 0.8
    @Option(
        help: """
            How long audit entries are kept: 90d, 12h, 30m or 2s. Older ones are deleted at start and every minute, \
            with expired sessions and forgotten login failures.
            """
    )
    var auditRetention: RetentionDuration = RetentionDuration(seconds: 30 * 86_400)
    @Option(
        help: """
            A load balancer or proxy in front of this server (an address or a CIDR network; repeatable): from it,             the client whose failed logins are throttled is read from Forwarded or X-Forwarded-For. Without one,             every client is its TCP peer, and behind a proxy one client's bad logins lock out everyone.
            """
    )
    var trustedProxy: [String] = []

    var openIDProviders: [OpenIDProviderConfiguration] {
        zip(oidcIssuer, oidcAudience).map { OpenIDProviderConfiguration(issuer: $0, audience: $1) }
    }

    func validate() throws {
        if oidcIssuer.count != oidcAudience.count {
            throw ValidationError("Give one --oidc-audience for every --oidc-issuer, in the same order.")
        }
        for provider in openIDProviders {
            do { try provider.validate() } catch { throw ValidationError(error.message) }
        }
        if let oidcAutoCreate, !["driver", "consumer"].contains(oidcAutoCreate) {
            throw ValidationError("--oidc-auto-create must be driver or consumer.")
        }
        if oidcAutoCreate != nil, oidcIssuer.isEmpty {
            throw ValidationError("--oidc-auto-create needs an --oidc-issuer.")
        }
        if !(readinessTimeout > 0 && readinessTimeout.isFinite) {
            throw ValidationError("--readiness-timeout must be more than 0 seconds.")
        }
        do { _ = try TrustedProxies(trustedProxy) } catch { throw ValidationError("--trusted-proxy: \(error).") }
        if !(10...16).contains(bcryptCost) { throw ValidationError("--bcrypt-cost must be between 10 and 16.") }
        if !(mintRate >= 0 && mintRate.isFinite) { throw ValidationError("--mint-rate must be 0 or more.") }
        if mintBurst < 1 { throw ValidationError("--mint-burst must be at least 1.") }
        if !(60...3600).contains(tokenLifetime) {
            throw ValidationError("--token-lifetime must be between 60 and 3600 seconds.")
        }
    }

    func run() async throws {
        let exporter = try logging.bootstrap(serviceName: "fleetauth-token-server")
        try prepareDataDirectory(storage.data)
        let logger = Logger.quiet(label: "fleetauth.token-server")
        var auditLogger = Logger(label: "fleetauth.token-server.audit")
        auditLogger.logLevel = .info
        let keylessSigners = try await keyless.keylessSigners()
        for (family, signer) in keylessSigners.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            say(
                "\(family) tokens signed by \(signer.kind == "iam" ? "IAM" : "a PKCS#11 token") as \(signer.serviceAccountEmail) (no key held here)"
            )
        }
        if let url = try storage.postgresURL() {
            say("Users, sessions, audit and signing keys in PostgreSQL at \(url)")
        }
        try await storage.withStore(forServer: true, timeouts: databaseTimeouts.timeouts) { store in
            try await serve(
                store: store,
                keylessSigners: keylessSigners,
                logger: logger,
                auditLogger: auditLogger,
                exporter: exporter
            )
        }
    }

    private func serve(
        store: any TokenServerStorage,
        keylessSigners: [TokenFamily: KeylessSigner],
        logger: Logger,
        auditLogger: Logger,
        exporter: (any Service)?
    ) async throws {
        let keyEncryptionKey = try storage.keyEncryptionKey()
        var keyFiles: [TokenFamily: String] = [:]
        keyFiles[.driver] = driverKey
        keyFiles[.consumer] = consumerKey
        keyFiles[.server] = serverKey
        keyFiles[.delivery] = deliveryKey
        keyFiles[.deliveryServer] = deliveryServerKey
        keyFiles[.reader] = readerKey
        let server: TokenServer
        do {
            server = try await TokenServer(
                configuration: .init(
                    dataDirectory: storage.data,
                    project: project,
                    keyFiles: keyFiles,
                    keyEncryptionKey: keyEncryptionKey,
                    bcryptCost: bcryptCost,
                    tokenLifetime: tokenLifetime,
                    mintRate: .init(perMinute: mintRate, burst: mintBurst),
                    limits: connectionLimits.applied(to: TokenServer.Configuration.defaultLimits),
                    auditRetention: .seconds(auditRetention.seconds),
                    publicURL: publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 },
                    openIDProviders: openIDProviders,
                    openIDAutoCreateRole: oidcAutoCreate.flatMap(AppUserRole.init),
                    fleetEngineURL: emulatorURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 },
                    tileURL: tileURL,
                    readinessTimeout: .milliseconds(Int64(readinessTimeout * 1000)),
                    trustedProxies: try TrustedProxies(trustedProxy)
                ),
                store: store,
                keylessSigners: keylessSigners,
                auditLogger: auditLogger,
                logger: logger
            )
        } catch let error as KeyEncryptionKeyError {
            throw CLIError(error.message)
        } catch let error as ServiceAccountKeyError {
            throw CLIError(error.message)
        }
        if let password = try await server.createOperatorIfNoUsers() {
            say("Created operator account \"operator\" with password \(password) (shown once).")
        }
        if let federation = server.login.federation {
            for provider in await federation.prefetch() {
                say(
                    "ID tokens of \(provider.issuer): "
                        + (provider.keys > 0 ? "\(provider.keys) signing keys" : "keys not readable yet (logged above)")
                )
            }
        }
        let host = self.host
        let data = storage.data
        let keyring = server.keyring
        let publicURL = server.configuration.publicURL
        let listener = Listener(name: "the token server's port", host: host, port: port, option: "--host/--port")
        let certificate = try tls.certificate()
        let scheme = certificate == nil ? "http" : "https"
        let startup = ListenerStartup([listener]) { ports in
            let port = ports[0].1
            if certificate == nil { warnIfPlaintextBeyondLoopback(host, serving: "The token server") }
            let base = publicURL ?? "\(scheme)://\(host):\(port)"
            say(
                "Token server listening on \(scheme)://\(host):\(port)"
                    + (publicURL.map { " (reached at \($0))" } ?? "")
            )
            for entry in keyring.keySetURLs(baseURL: base) { say("  \(entry.family) keys: \(entry.url)") }
            say("Trust it from the emulator: fleetauth emulator --trust \(data)/\(TokenServer.trustFileName)")
            say("Journey sharing: \(base)/app/trip/TRIP_ID   Fleet console: \(base)/app/console")
        }
        var services: [any Service] = [
            server.store,
            startup.guarding(
                server.application(host: host, port: port, logger: logger, certificate: certificate) {
                    await startup.bound(listener, port: $0)
                },
                listener
            ),
            keyring.pruner(interval: server.configuration.keyPruneInterval, logger: logger),
            server.retentionPruner(logger: logger),
        ]
        if let certificate { services.append(certificate.watcher(logger: logger)) }
        // Last, so it is the first to stop: the server reports not ready, still answering, before its port closes.
        services.append(server.drain.service(period: shutdown.drain))
        try await runServices(
            (exporter.map { [$0] } ?? []) + services,
            shutdown: shutdown,
            logger: logger
        )
    }
}

extension KeysCommand {
    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Add a new signing key to a token family of the token server; the old key stays published until its tokens expire.",
            discussion: "A running token server picks the new key up within a second."
        )
        @OptionGroup var storage: TokenServerDataOptions
        @Option(help: "driver, consumer, server, delivery, delivery-server, reader or all.") var family: String = "all"

        func run() async throws {
            let families: [TokenFamily]
            if family == "all" {
                families = TokenFamily.allCases
            } else if let one = TokenFamily(rawValue: family) {
                families = [one]
            } else {
                throw CLIError("--family must be one of \(TokenFamily.names), all.")
            }
            let keyEncryptionKey = try storage.keyEncryptionKey()
            try await storage.withExistingStore { store in
                guard let first = try await store.signingKeys().first else {
                    throw CLIError("No signing keys in the token server's store yet: start the token server once.")
                }
                let keyring: Keyring
                do {
                    let local = try await store.signingKeys().first { !$0.material.isExternal } ?? first
                    let project =
                        local.material.isExternal
                        ? "demo-project" : try Keyring.key(of: local, keyEncryptionKey: keyEncryptionKey).projectID
                    keyring = try await Keyring(
                        store: store,
                        keyDirectory: storage.data + "/keys",
                        project: project,
                        keyEncryptionKey: keyEncryptionKey,
                        reconcile: false
                    )
                } catch let error as KeyEncryptionKeyError {
                    throw CLIError(error.message)
                } catch let error as ServiceAccountKeyError {
                    throw CLIError(error.message)
                }
                for family in families {
                    let current = try keyring.signingKey(for: family)
                    if current.record.material.isExternal {
                        var message = "FleetAuth holds no key of the \(family) family."
                        do { _ = try await keyring.rotate(family) } catch let error as GoogleAPIError {
                            message = error.message
                        }
                        if family.rawValue == self.family { throw CLIError(message) }
                        say("\(family): skipped. \(message)")
                        continue
                    }
                    let old = current.record.kid
                    let new = try await keyring.rotate(family)
                    say("\(family): new signing key \(new.kid) (previous \(old) published until its tokens expire).")
                }
            }
        }
    }
}
