import ArgumentParser
import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerSupport
import FleetEngineEmulator
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract:
            "Run a local Fleet Engine: the on-demand (vehicles, trips) and Deliveries APIs over REST and gRPC, every call authorized by its JWT.",
        discussion: """
            Without --trust, the emulator provisions one service account per Fleet Engine role in the data \
            directory (key files under keys/, provider demo-project), trusts them, and prints a ready \
            `fleetauth token mint` command for each role. Data is kept in SQLite in the data directory unless \
            --in-memory is given, or in PostgreSQL with --database (or DATABASE_URL), where several emulators can \
            share it.

            --iam-port turns on local stand-ins for Google's metadata server and IAM Credentials API (signJwt, \
            signBlob, and the accounts' public keys), for trying keyless signing on one machine. They are for local \
            use only: the metadata route hands an access token to any caller, so they are off by default, bind \
            loopback only on a port of their own, and sign only as the accounts named by --iam-sign-as.

            --test-controls serves the controls a test steers the emulator with under /emulator/v1/ on the REST \
            port: reset a provider (fleetauth emulator control reset). They delete data, so they are off unless \
            asked for, and each call needs a server token of the provider it steers.
            """,
        subcommands: [EmulatorControlCommand.self]
    )

    @Option(help: "Trust configuration file (JSON). Default: provision one service account per role.")
    var trust: String?
    @Option(help: "Data directory for the database and provisioned keys.") var data: String = "fleet-engine-data"
    @Flag(help: "Keep vehicles and trips in memory only.") var inMemory = false
    @Flag(
        help: """
            Serve the test controls under /emulator/v1/ (reset a provider; fleetauth emulator control), for a server \
            token of the provider. Off by default: they delete data.
            """
    )
    var testControls = false
    @Option(
        help: "PostgreSQL for vehicles and trips: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (or DATABASE_URL)."
    )
    var database: String?
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "REST port to listen on (0 picks a free one).") var port: Int = 8787
    @Option(help: "gRPC (plaintext HTTP/2) port to listen on (0 picks a free one).") var grpcPort: Int = 8786
    @Option(
        help: """
            Port of a listener of its own serving every metric at /metrics, token rejections by reason included             (the public port's /metrics leaves them out unless asked with a server or fleet-reader token). Default: none.
            """
    )
    var metricsPort: Int?
    @Option(help: "Address the metrics listener binds.") var metricsHost: String = "127.0.0.1"
    @Option(help: "Provider (project) for the provisioned accounts.") var project: String = "demo-project"
    @Option(
        help: """
            Seconds a connection may stay without a complete request (REST) or without an open call (gRPC; one that             sends nothing at all is closed 5 s later).
            """
    )
    var idleTimeout: Double = 30
    @Option(help: "Seconds a gRPC connection may live before it is asked to go away (GOAWAY); 0 for no limit.")
    var grpcMaxConnectionAge: Double = 3600
    @Option(help: "Seconds without inbound data before a gRPC keepalive PING (unanswered for 20 s: closed).")
    var grpcKeepalive: Double = 60
    @Option(help: "Calls one gRPC connection may have open at once.") var grpcMaxConcurrentStreams: Int = 100
    @Option(
        help: """
            A web origin (scheme://host:port, or *) whose pages may call the REST API from the browser (CORS); \
            repeatable. Credentials (cookies) are never allowed. Default: none.
            """
    )
    var allowOrigin: [String] = []
    @Option(
        help: """
            Port (0 picks a free one) of the local stand-ins for Google's metadata server and IAM Credentials API, \
            for local keyless signing only: they hand out access tokens to any local caller. Default: off.
            """
    )
    var iamPort: Int?
    @Option(help: "Loopback address the IAM stand-ins bind (127.0.0.1 or ::1); any other is refused.")
    var iamHost: String = "127.0.0.1"
    @Option(
        help: """
            An account the IAM stand-ins may sign as (the runtime identity is granted \
            roles/iam.serviceAccountTokenCreator on it); its key file must be in the trust file. Repeatable; \
            signing as any other account is refused (403).
            """
    )
    var iamSignAs: [String] = []
    @Option(help: "The email of the runtime identity the metadata stand-in answers for.")
    var iamRuntimeAccount: String?
    @OptionGroup var tls: TLSOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var shutdown: ShutdownOptions
    @OptionGroup var databaseTimeouts: DatabaseTimeoutOptions
    @OptionGroup var connectionLimits: ConnectionLimitOptions
    @Option(
        help: """
            Seconds each /readyz check (store, trusted keys) may take before it counts as failing; the gRPC health \
            status follows. Under the 1 s orchestrators' probes wait by default, so they see the 503 and its reason.
            """
    )
    var readinessTimeout: Double = 0.8
    @Option(
        help: """
            How many request-log entries to keep in the store, or "off": one Cloud Logging entry per call, with why \
            it was allowed or refused, read through POST /v2/entries:list with a server or fleet-reader token \
            (fleetauth logs).
            """
    )
    var requestLog: String = "100000"
    @Option(help: "How many days a request-log entry is kept, on the emulator's clock.")
    var requestLogRetentionDays: Double = 30

    /// The request log's capacity `--request-log` names (0: off).
    var requestLogCapacity: Int? { requestLog == "off" ? 0 : Int(requestLog).flatMap { $0 >= 0 ? $0 : nil } }

    func validate() throws {
        if requestLogCapacity == nil {
            throw ValidationError("--request-log takes a number of entries (0 or more) or \"off\".")
        }
        if !(requestLogRetentionDays > 0 && requestLogRetentionDays.isFinite) {
            throw ValidationError("--request-log-retention-days must be more than 0.")
        }
        if idleTimeout <= 0 { throw ValidationError("--idle-timeout must be positive.") }
        if !(readinessTimeout > 0 && readinessTimeout.isFinite) {
            throw ValidationError("--readiness-timeout must be more than 0 seconds.")
        }
        if iamPort == nil, !iamSignAs.isEmpty || iamRuntimeAccount != nil {
            throw ValidationError("--iam-sign-as and --iam-runtime-account need --iam-port.")
        }
        if let iamPort, iamPort != 0, [port, grpcPort, metricsPort].contains(iamPort) {
            throw ValidationError("--iam-port must differ from the other ports.")
        }
        if grpcMaxConnectionAge < 0 { throw ValidationError("--grpc-max-connection-age must be 0 or more.") }
        if grpcKeepalive <= 0 { throw ValidationError("--grpc-keepalive must be positive.") }
        if grpcMaxConcurrentStreams < 1 {
            throw ValidationError("--grpc-max-concurrent-streams must be at least 1.")
        }
        if grpcPort != 0, grpcPort == port { throw ValidationError("--grpc-port must differ from --port.") }
        if let metricsPort, metricsPort != 0, [port, grpcPort].contains(metricsPort) {
            throw ValidationError("--metrics-port must differ from --port and --grpc-port.")
        }
        if inMemory, database != nil { throw ValidationError("--in-memory and --database exclude each other.") }
        for origin in allowOrigin where origin != "*" {
            guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme),
                url.host != nil, url.path.isEmpty, url.query == nil
            else {
                throw ValidationError("--allow-origin \(origin) must be scheme://host[:port] (no path), or *.")
            }
        }
    }

    func run() async throws {
        // Refused before anything starts, in one line: the stand-ins hand out access tokens to any caller.
        if iamPort != nil {
            guard LocalIAM.isLoopback(iamHost) else {
                throw CLIError(
                    "--iam-host \(iamHost) is not a loopback address: the IAM and metadata server stand-ins bind 127.0.0.1 or ::1 only."
                )
            }
            guard !iamSignAs.isEmpty else {
                throw CLIError(
                    "--iam-port needs at least one --iam-sign-as EMAIL: the accounts the stand-ins may sign as."
                )
            }
        }
        let exporter = try logging.bootstrap(serviceName: "fleetauth-emulator")
        let certificate = try tls.certificate()
        let postgres = try DatabaseOption.postgres(database, inMemory: inMemory)
        // The data directory holds provisioned keys and the SQLite file: made only when one of them is wanted.
        if self.trust == nil || (postgres == nil && !inMemory) { try prepareDataDirectory(data) }
        let trust: TrustConfiguration
        do {
            if let path = self.trust {
                trust = try TrustConfiguration(contentsOf: path)
            } else {
                let accounts = try DefaultProvisioning.provision(dataDirectory: data, project: project)
                say("Provider: \(project)")
                say("Service accounts (one per role), keys in \(data)/keys:")
                for account in accounts {
                    say("  \(account.role.id)")
                    say("    \(account.key.clientEmail)")
                    say("    \(account.mintCommand)")
                }
                trust = try TrustConfiguration(contentsOf: data + "/" + DefaultProvisioning.trustFileName)
            }
        } catch let error as TrustConfigurationError {
            throw CLIError(error.message)
        }
        if let url = postgres {
            try await reportingRefusals {
                try await PostgresFleetStore.withConnected(url, timeouts: databaseTimeouts.timeouts) { store in
                    say("Vehicles and trips in PostgreSQL at \(url)")
                    try await serve(trust: trust, store: store, certificate: certificate, exporter: exporter)
                }
            }
        } else if inMemory {
            try await serve(
                trust: trust,
                store: try SQLiteFleetStore(inMemory: ()),
                certificate: certificate,
                exporter: exporter
            )
        } else {
            try await serve(
                trust: trust,
                store: try SQLiteFleetStore(path: data + "/" + EmulatorServer.databaseFileName),
                certificate: certificate,
                exporter: exporter
            )
        }
    }

    private func serve(
        trust: TrustConfiguration,
        store: any EmulatorStore,
        certificate: ServerCertificate?,
        exporter: (any Service)?
    ) async throws {
        var configuration = EmulatorServer.Configuration(allowedOrigins: allowOrigin)
        configuration.limits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        configuration.limits = connectionLimits.applied(to: configuration.limits)
        configuration.grpc.maximumAge =
            grpcMaxConnectionAge == 0 ? nil : .milliseconds(Int64(grpcMaxConnectionAge * 1000))
        configuration.grpc.keepaliveInterval = .milliseconds(Int64(grpcKeepalive * 1000))
        configuration.grpc.maximumConcurrentStreams = grpcMaxConcurrentStreams
        configuration.readinessTimeout = .milliseconds(Int64(readinessTimeout * 1000))
        configuration.requestLogCapacity = requestLogCapacity ?? 0
        configuration.requestLogRetention = .seconds(requestLogRetentionDays * 24 * 3600)
        configuration.testControls = testControls
        let server: EmulatorServer
        do {
            server = try await EmulatorServer(
                configuration: configuration,
                trust: trust,
                store: store,
                iam: try await localIAM(trust: trust)
            )
        } catch let error as TrustConfigurationError {
            throw CLIError(error.message)
        } catch let error as LocalIAMError {
            throw CLIError("--iam-sign-as: \(error.description)")
        }
        let host = self.host
        let logger = Logger.quiet(label: "fleetauth.emulator")
        let rest = Listener(name: "the REST port", host: host, port: port, option: "--host/--port")
        let grpc = Listener(name: "the gRPC port", host: host, port: grpcPort, option: "--host/--grpc-port")
        let metrics = metricsPort.map {
            Listener(name: "the metrics port", host: metricsHost, port: $0, option: "--metrics-host/--metrics-port")
        }
        let iamListener = iamPort.map {
            Listener(name: "the IAM stand-ins' port", host: iamHost, port: $0, option: "--iam-host/--iam-port")
        }
        let scheme = certificate == nil ? "http" : "https"
        let transport = certificate == nil ? "plaintext" : "TLS"
        let startup = ListenerStartup([rest, grpc] + [metrics, iamListener].compactMap { $0 }) { ports in
            if certificate == nil { warnIfPlaintextBeyondLoopback(host, serving: "The emulator") }
            for (listener, port) in ports {
                switch listener {
                case rest: say("Fleet Engine emulator listening on \(scheme)://\(host):\(port)")
                case grpc: say("Fleet Engine emulator gRPC listening on \(host):\(port) (\(transport))")
                case iamListener:
                    say(
                        "Local IAM and metadata server stand-ins (local use only) on http://\(listener.host):\(port): "
                            + "GCE_METADATA_HOST=\(listener.host):\(port), signing as \(iamSignAs.joined(separator: ", "))"
                    )
                default: say("Fleet Engine emulator metrics on http://\(listener.host):\(port)/metrics")
                }
            }
        }
        // The request log's writer right after the store: services stop in reverse order, so it writes the last
        // calls' entries once the listeners have closed, and before the store closes.
        var services: [any Service] =
            [server.store] + [server.requestLogService(logger: logger)].compactMap { $0 } + [
                startup.guarding(
                    server.application(host: host, port: port, logger: logger, certificate: certificate) {
                        await startup.bound(rest, port: $0)
                    },
                    rest
                ),
                startup.guarding(
                    server.grpcServer(host: host, port: grpcPort, certificate: certificate) {
                        await startup.bound(grpc, port: $0)
                    },
                    grpc
                ),
            ]
        if let metrics {
            services.append(
                startup.guarding(
                    server.metricsApplication(host: metrics.host, port: metrics.port, logger: logger) {
                        await startup.bound(metrics, port: $0)
                    },
                    metrics
                )
            )
        }
        if let iamListener {
            services.append(
                startup.guarding(
                    try server.iamApplication(host: iamListener.host, port: iamListener.port, logger: logger) {
                        await startup.bound(iamListener, port: $0)
                    },
                    iamListener
                )
            )
        }
        if let certificate { services.append(certificate.watcher(logger: logger)) }
        // Last, so it is the first to stop: the server reports not ready, still answering, before any port closes.
        services.append(server.drain.service(period: shutdown.drain))
        try await runServices(
            (exporter.map { [$0] } ?? []) + services,
            shutdown: shutdown,
            logger: logger
        )
    }
}

extension EmulatorCommand {
    /// The IAM stand-ins when `--iam-port` asks for them: the trust file's key files, signing only as `--iam-sign-as`.
    func localIAM(trust: TrustConfiguration) async throws -> LocalIAM? {
        guard iamPort != nil else { return nil }
        var keys: [ServiceAccountKey] = []
        for entry in trust.serviceAccounts where entry.keySource.isKeyFile {
            do {
                keys.append(try ServiceAccountKey(contentsOf: entry.keySource.location))
            } catch {
                throw CLIError("the key file of \(entry.account.email) cannot be read: \(error)")
            }
        }
        return try await LocalIAM(
            keys: keys,
            signableAccounts: Set(iamSignAs),
            runtimeServiceAccount: iamRuntimeAccount
        )
    }
}
