import ArgumentParser
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

#if OTLPExporter
    import OTel
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a server stops: `--drain-period`, then `--shutdown-grace`.
struct ShutdownOptions: ParsableArguments {
    @Option(
        help: """
            Seconds the server keeps answering after SIGTERM or SIGINT while /readyz says 503 and gRPC health \
            NOT_SERVING, so a load balancer stops sending it requests before its ports close. Behind one whose probe \
            runs every N seconds, give more than N.
            """
    )
    var drainPeriod: Double = 1
    @Option(help: "Seconds in-flight requests then get to finish, once the ports close, before they are cancelled.")
    var shutdownGrace: Double = 10

    func validate() throws {
        if !(drainPeriod >= 0 && drainPeriod.isFinite) {
            throw ValidationError("--drain-period must be 0 or more seconds.")
        }
        if !(shutdownGrace >= 0 && shutdownGrace.isFinite) {
            throw ValidationError("--shutdown-grace must be 0 or more seconds.")
        }
    }

    var drain: Duration { .milliseconds(Int64(drainPeriod * 1000)) }
    var grace: Duration { .milliseconds(Int64(shutdownGrace * 1000)) }
}

/// Runs a server's services until SIGTERM or SIGINT. The group stops them in reverse order, each once the one
/// after it has returned: the last service, the server's ``ShutdownDrain``, keeps the server answering but not ready
/// for the drain period; then every listener stops accepting and in-flight requests get the grace to finish before
/// they are cancelled. A service that fails ends the others gracefully; a listener that cannot be bound is reported
/// in one line (`Error: Cannot listen on …`) with exit status 1.
///
/// Shutdown always ends: if services are still running the drain period, the grace and
/// ``ShutdownWatchdog/cancellationAllowance`` after the signal (a request waiting on a database that never answers
/// ignores its cancellation), the process prints one line naming them and exits with status 1 — never the crash
/// swift-service-lifecycle ends such a group with when its own cancellation limit passes.
func runServices(_ services: [any Service], shutdown: ShutdownOptions, logger: Logger) async throws {
    let grace = shutdown.drain + shutdown.grace
    let watchdog = ShutdownWatchdog(limit: grace + ShutdownWatchdog.cancellationAllowance)
    var configuration = ServiceGroupConfiguration(
        services: services.map {
            .init(service: watchdog.tracking($0), failureTerminationBehavior: .gracefullyShutdownGroup)
        },
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
    configuration.maximumGracefulShutdownDuration = grace
    // No limit of the library's: its limit ends the process with a fatal error. The watchdog bounds it instead.
    configuration.maximumCancellationDuration = nil
    watchdog.arm(on: [SIGTERM, SIGINT])
    defer { watchdog.disarm() }
    do {
        try await ServiceGroup(configuration: configuration).run()
    } catch let error as ListenerError {
        throw CLIError(error.description)
    }
}

/// Creates the data directory if needed and checks it can be written, so a bad `--data` is one line naming the
/// directory and the option, not a Foundation error from deep inside a store.
func prepareDataDirectory(_ path: String, option: String = "--data") throws {
    // mkdir -p by hand: Foundation's errors do not say why in words.
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        prefix += "/" + component
        if isDirectory(prefix) { continue }
        guard mkdir(prefix, 0o755) != 0 else { continue }
        let failure = errno
        if failure == EEXIST, isDirectory(prefix) { continue }  // made by another process meanwhile
        do {
            let reason =
                failure == EEXIST ? "\(prefix) is not a directory" : String(cString: strerror(failure)).lowercased()
            throw CLIError("Cannot create the data directory \(path): \(reason). Choose another with \(option).")
        }
    }
    // The data is this user's alone (PrivateFiles), whatever the umask.
    chmod(path, 0o700)
    guard access(path, W_OK | X_OK) == 0 else {
        throw CLIError(
            "Cannot write to the data directory \(path): \(String(cString: strerror(errno)).lowercased()). "
                + "Choose another with \(option)."
        )
    }
}

private func isDirectory(_ path: String) -> Bool {
    var directory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
}

/// How a server command logs: `--log-format text|json`.
struct LoggingOptions: ParsableArguments {
    @Option(
        help: """
            text, or json: one JSON object per line (standard error), with Google Cloud Logging's field names \
            (severity, message, logging.googleapis.com/trace).
            """
    )
    var logFormat: LogFormat = .text

    /// Bootstraps tracing (when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set: spans
    /// exported over OTLP, HTTP/protobuf unless `OTEL_EXPORTER_OTLP_PROTOCOL` says grpc), then logging, whose lines
    /// then carry the trace and span IDs of their request. Returns the exporter's service, to run with the server's.
    func bootstrap(serviceName: String) throws -> (any Service)? {
        let environment = ProcessInfo.processInfo.environment
        let tracing = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].contains {
            !(environment[$0] ?? "").isEmpty
        }
        guard tracing else {
            logFormat.bootstrap()
            return nil
        }
        #if OTLPExporter
            // Logging first, so the exporter's own diagnostics go through it (warnings and errors only).
            logFormat.bootstrap(metadataProvider: OTel.makeLoggingMetadataProvider())
            var configuration = OTel.Configuration.default
            configuration.diagnosticLogger = .custom(.quiet(label: "fleetauth.otel"))
            configuration.serviceName = serviceName
            configuration.logs.enabled = false
            configuration.metrics.enabled = false
            configuration.traces.exporter = .otlp
            configuration.traces.otlpExporter.protocol = .httpProtobuf
            do {
                return try OTel.bootstrap(configuration: configuration)
            } catch {
                throw CLIError("Cannot export traces as OTEL_* variables say: \(error).")
            }
        #else
            throw CLIError("This build of fleetauth has no OTLP exporter (built without the OTLPExporter trait).")
        #endif
    }
}

extension LogFormat: ExpressibleByArgument {}

/// A retention period on the command line: a number and a unit, `d`, `h`, `m` or `s` (`90d`, `2s`).
struct RetentionDuration: ExpressibleByArgument, Sendable {
    let seconds: Int64

    init(seconds: Int64) { self.seconds = seconds }

    init?(argument: String) {
        let units: [Character: Int64] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        guard let unit = argument.last.flatMap({ units[$0] }), let count = Int64(argument.dropLast()), count > 0,
            count <= Int64.max / unit
        else { return nil }
        seconds = count * unit
    }

    var defaultValueDescription: String { seconds % 86_400 == 0 ? "\(seconds / 86_400)d" : "\(seconds)s" }
}

/// Warns (standard error) when a server listens beyond this machine without TLS (call it once every listener is
/// bound, so a start that fails says only why): bearer tokens and passwords would
/// cross the network in the clear. Loopback (127.0.0.0/8, ::1, localhost) is quiet.
func warnIfPlaintextBeyondLoopback(_ host: String, serving what: String) {
    let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
    guard !loopback else { return }
    let line =
        "Warning: \(what) listens on \(host) without TLS: tokens and passwords cross the network in the clear. "
        + "Put it behind a TLS-terminating proxy or load balancer, or bind 127.0.0.1."
    if LogFormat.active == .json {
        LogFormat.warn(line)
    } else {
        warn(line)
    }
}

/// `--tls-certificate FILE --tls-key FILE`: HTTPS (and gRPC over TLS) with a PEM certificate chain and key, read
/// again on SIGHUP or when the files change.
struct TLSOptions: ParsableArguments {
    @Option(
        help: """
            PEM certificate chain (leaf first) to serve HTTPS with — HTTP/2 and HTTP/1.1 by ALPN, and gRPC over TLS; \
            read again on SIGHUP or when the file changes. Needs --tls-key.
            """
    )
    var tlsCertificate: String?
    @Option(help: "PEM private key of --tls-certificate.") var tlsKey: String?

    func validate() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("Give --tls-certificate and --tls-key together.")
        }
    }

    /// The certificate, loaded (a file that does not serve is one line naming it), or nil for plain HTTP.
    func certificate() throws -> ServerCertificate? {
        guard let tlsCertificate, let tlsKey else { return nil }
        do {
            return try ServerCertificate(certificatePath: tlsCertificate, keyPath: tlsKey)
        } catch {
            throw CLIError(error.description + " Check --tls-certificate and --tls-key.")
        }
    }
}
