import ArgumentParser
import FleetAuthServerCore
import FleetAuthServerSupport
import FleetAuthStack
import FleetEngineEmulator
import FleetTokenServer
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the token server and the Fleet Engine emulator together until interrupted.",
        discussion: """
            The emulator trusts the token server's keys by JWK set URL. State (users, grants, keys, vehicles, \
            trips) is kept in the data directory, so a restart continues where it stopped. The first start \
            creates an operator account and prints its password once.
            """
    )

    @Option(help: "Data directory.") var data: String = "fleetauth-data"
    @Option(
        help: """
            PostgreSQL for both servers' state: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (or DATABASE_URL). \
            Needs a key-encryption key.
            """
    )
    var database: String?
    @Option(
        help:
            "File with the key-encryption key that seals signing keys in the database (or set FLEETAUTH_KEY_ENCRYPTION_KEY)."
    )
    var keyEncryptionKeyFile: String?
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Emulator REST port.") var emulatorPort: Int = 8787
    @Option(help: "Emulator gRPC port (plaintext HTTP/2).") var emulatorGRPCPort: Int = 8786
    @Option(help: "Token server port.") var tokenServerPort: Int = 8788
    @Option(help: "Google Cloud project (Fleet Engine provider) of generated keys.") var project: String =
        "demo-project"
    @Option(help: "Lifetime of issued Fleet Engine tokens in seconds (60–3600).") var tokenLifetime: Int64 = 3600
    @Option(help: "A map tile URL template ({z}/{x}/{y}) for the browser pages used online; default: no tiles.")
    var tileURL: String?
    @Flag(
        help: """
            No key in the token server: it signs every family through IAM signJwt, authenticated by the metadata \
            server, both played by the emulator's local stand-ins on a loopback port of their own, which hold the \
            service accounts' keys (DATA/iam) as Google would and sign only as those accounts.
            """
    )
    var keyless = false
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if !(60...3600).contains(tokenLifetime) {
            throw ValidationError("--token-lifetime must be between 60 and 3600 seconds.")
        }
    }

    func run() async throws {
        logging.logFormat.bootstrap()
        var auditLogger = Logger(label: "fleetauth.token-server.audit")
        auditLogger.logLevel = .info
        var storage = TokenServerDataOptions()
        storage.data = data
        storage.database = database
        storage.keyEncryptionKeyFile = keyEncryptionKeyFile
        let keyEncryptionKey = try storage.keyEncryptionKey()
        let configuration = TokenServer.Configuration(
            dataDirectory: data,
            project: project,
            keyEncryptionKey: keyEncryptionKey,
            tokenLifetime: tokenLifetime,
            tileURL: tileURL
        )
        let onPostgres = try storage.postgresURL() != nil
        do {
            if let url = try storage.postgresURL() {
                try await storage.withStore(forServer: true) { tokenServerStore in
                    try await reportingRefusals {
                        try await PostgresFleetStore.withConnected(url) { fleetStore in
                            say("State in PostgreSQL at \(url)")
                            try await serve(
                                LocalStack(
                                    dataDirectory: data,
                                    tokenServer: configuration,
                                    tokenServerStore: tokenServerStore,
                                    fleetStore: fleetStore,
                                    auditLogger: auditLogger,
                                    keylessIAMPort: keyless ? 0 : nil
                                ),
                                onPostgres: onPostgres
                            )
                        }
                    }
                }
            } else {
                try await serve(
                    LocalStack(
                        dataDirectory: data,
                        tokenServer: configuration,
                        auditLogger: auditLogger,
                        keylessIAMPort: keyless ? 0 : nil
                    ),
                    onPostgres: onPostgres
                )
            }
        } catch let error as KeyEncryptionKeyError {
            throw CLIError(error.message)
        } catch var error as ListenerError {
            error.listener.option =
                [
                    "the emulator's REST port": "--host/--emulator-port",
                    "the emulator's gRPC port": "--host/--emulator-grpc-port",
                    "the token server's port": "--host/--token-server-port",
                ][error.listener.name]
            throw CLIError(error.description)
        }
    }

    private func serve(_ stack: LocalStack, onPostgres: Bool) async throws {
        let operatorPassword = try await stack.tokenServer.createOperatorIfNoUsers()
        if let operatorPassword {
            say("Created operator account \"operator\" with password \(operatorPassword) (shown once).")
        }
        // The stack's groups give a graceful shutdown 10 s; past 15 s after the signal the process exits with one line.
        let watchdog = ShutdownWatchdog(limit: .seconds(10) + ShutdownWatchdog.cancellationAllowance)
        watchdog.arm(on: [SIGTERM, SIGINT])
        defer { watchdog.disarm() }
        try await stack.serve(
            host: host,
            emulatorPort: emulatorPort,
            emulatorGRPCPort: emulatorGRPCPort,
            tokenServerPort: tokenServerPort
        ) { endpoints in
            say("Token server:          \(endpoints.tokenServerURL)")
            say("Fleet Engine emulator: \(endpoints.emulatorURL)  (provider \(endpoints.project))")
            if keyless, let iamPort = stack.keylessIAMPort {
                say(
                    "Keyless: the token server holds no key; it signs through IAM signJwt at http://127.0.0.1:\(iamPort)"
                )
                say("         (the emulator's local IAM and metadata server stand-ins, with the keys in \(data)/iam)")
            }
            if let grpc = endpoints.emulatorGRPCAddress { say("Fleet Engine gRPC:     \(grpc)  (plaintext HTTP/2)") }
            say("Journey sharing (consumers): \(endpoints.tokenServerURL)/app/trip/TRIP_ID")
            say("Shipment tracking:           \(endpoints.tokenServerURL)/app/shipment/TRACKING_ID")
            say("Fleet console (operators):   \(endpoints.tokenServerURL)/app/console")
            say("")
            for line in FirstSteps(
                tokenServerURL: endpoints.tokenServerURL,
                emulatorURL: endpoints.emulatorURL,
                project: endpoints.project,
                operatorPassword: operatorPassword,
                storeOption: onPostgres
                    ? "--database \"$DATABASE_URL\"" : "--data \(URL(fileURLWithPath: data).standardizedFileURL.path)",
                binaryDirectory: Bundle.main.executableURL?.deletingLastPathComponent().path
            ).lines {
                say(line)
            }
            say("")
            say("Press Ctrl-C to stop.")
        }
    }
}

/// What `serve` prints to paste next, in another shell: the operator creates a vehicle, a driver is added and
/// granted it, logs in as the Driver SDK's token provider would, reports a location with the driver token, and is
/// refused (403) for a vehicle the token does not name.
struct FirstSteps {
    let tokenServerURL: String
    let emulatorURL: String
    let project: String
    /// The operator's password when this start created the account; otherwise the user knows it.
    let operatorPassword: String?
    /// `--data DIR` (absolute: the next shell may be elsewhere) or `--database "$DATABASE_URL"`: where
    /// `fleetauth users` finds the token server's state.
    let storeOption: String
    /// The folder of the running `fleetauth`, put on the PATH first.
    let binaryDirectory: String?

    var lines: [String] {
        let vehicles = "\(emulatorURL)/v1/providers/\(project)/vehicles"
        let json = "-H 'Content-Type: application/json'"
        let session = #"sed -E 's/.*"sessionToken": *"([^"]*)".*/\1/'"#
        let jwt = #"sed -E 's/.*"jwt": *"([^"]*)".*/\1/'"#
        let vehicle =
            #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"#
            + #""vehicleType":{"category":"AUTO"}}"#
        let location = #"{"lastLocation":{"location":{"latitude":37.422,"longitude":-122.084}}}"#
        func logIn(_ username: String, _ password: String) -> String {
            "curl -s -X POST \(tokenServerURL)/v1/sessions \(json) "
                + #"-d '{"username":"\#(username)","password":"\#(password)"}' | \#(session)"#
        }
        return [
            "Next, in another shell:",
            binaryDirectory.map { "export PATH=\"\($0):$PATH\"" } ?? "# (put fleetauth on the PATH)",
            "# The operator creates vehicle v1 with a server token.",
            "OPERATOR=$(\(logIn("operator", operatorPassword ?? "OPERATOR_PASSWORD")))",
            "SERVER=$(curl -s \(tokenServerURL)/token/server -H \"Authorization: Bearer $OPERATOR\" | \(jwt))",
            "curl -s -w '\\n' -X POST '\(vehicles)?vehicleId=v1' -H \"Authorization: Bearer $SERVER\" \(json) -d '\(vehicle)'",
            "# A driver who may drive v1 logs in and fetches a driver token, as the Driver SDK's token provider does.",
            "echo dana-password | fleetauth users add dana --role driver --password-stdin \(storeOption)",
            "fleetauth users grant dana --vehicle v1 \(storeOption)",
            "DANA=$(\(logIn("dana", "dana-password")))",
            "DRIVER=$(curl -s \(tokenServerURL)/token/driver/v1 -H \"Authorization: Bearer $DANA\" | \(jwt))",
            "# The driver token updates v1's location; another vehicle is refused (403 PERMISSION_DENIED).",
            "curl -s -w '\\n' -X PUT '\(vehicles)/v1?updateMask=lastLocation' -H \"Authorization: Bearer $DRIVER\" \(json) "
                + "-d '\(location)'",
            "curl -s -w '\\n' -X PUT '\(vehicles)/v2?updateMask=lastLocation' -H \"Authorization: Bearer $DRIVER\" \(json) "
                + "-d '\(location)'",
            "# Why: the request log's entry for the refused call names the check that failed.",
            "fleetauth logs --emulator \(emulatorURL) --token \"$SERVER\" --limit 1 'severity>=WARNING'",
        ]
    }
}
