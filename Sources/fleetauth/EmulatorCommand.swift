import ArgumentParser
import FleetAuthCore
import FleetAuthJWT
import FleetEngineEmulator
import Foundation
import Hummingbird
import Logging

struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run a local Fleet Engine: the REST v1 vehicle and trip API, every call authorized by its JWT.",
        discussion: """
            Without --trust, the emulator provisions one service account per Fleet Engine role in the data \
            directory (key files under keys/, provider demo-project), trusts them, and prints a ready \
            `fleetauth token mint` command for each role. Data is kept in SQLite in the data directory unless \
            --in-memory is given.
            """
    )

    @Option(help: "Trust configuration file (JSON). Default: provision one service account per role.")
    var trust: String?
    @Option(help: "Data directory for the database and provisioned keys.") var data: String = "fleet-engine-data"
    @Flag(help: "Keep vehicles and trips in memory only.") var inMemory = false
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free one).") var port: Int = 8787
    @Option(help: "Provider (project) for the provisioned accounts.") var project: String = "demo-project"

    func run() async throws {
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let configuration: TrustConfiguration
        if let trust {
            do {
                configuration = try TrustConfiguration(contentsOf: trust)
            } catch {
                throw CLIError(error.message)
            }
        } else {
            let accounts = try DefaultProvisioning.provision(dataDirectory: data, project: project)
            say("Provider: \(project)")
            say("Service accounts (one per role), keys in \(data)/keys:")
            for account in accounts {
                say("  \(account.role.id)")
                say("    \(account.key.clientEmail)")
                say("    \(account.mintCommand)")
            }
            configuration = try TrustConfiguration(contentsOf: data + "/trust.json")
        }
        let accounts: [(TrustedServiceAccount, [RSAVerificationKey])]
        do {
            accounts = try await configuration.loadAccounts()
        } catch let error as TrustConfigurationError {
            throw CLIError(error.message)
        }
        let store =
            inMemory ? try SQLiteFleetStore(inMemory: ()) : try SQLiteFleetStore(path: data + "/fleet-engine.sqlite")
        let metrics = EmulatorMetrics()
        let authenticator = TokenAuthenticator(
            accounts: accounts,
            onRejection: { metrics.tokenRejected(reason: $0) },
            onAuthentication: { metrics.tokenAuthenticated(in: $0, cached: $1) }
        )
        var urls: [String: String] = [:]
        for entry in configuration.serviceAccounts where entry.keySource.isURL {
            urls[entry.account.email] = entry.keySource.location
        }
        let router = FleetEngineEmulator.makeRouter(
            authenticator: authenticator,
            store: store,
            keyRefresher: urls.isEmpty ? nil : KeyRefresher(urls: urls),
            metrics: metrics
        )
        var logger = Logger(label: "fleetauth.emulator")
        logger.logLevel = .warning
        let host = self.host
        let application = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "fleetauth-emulator"),
            onServerRunning: { channel in
                say("Fleet Engine emulator listening on http://\(host):\(channel.localAddress?.port ?? 0)")
            },
            logger: logger
        )
        try await application.runService()
    }
}
