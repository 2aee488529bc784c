import ArgumentParser
import FleetAuthCore
import FleetAuthJWT
import FleetAuthStack
import FleetEngineEmulator
import FleetTokenServer
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

/// Where the token server keeps its state, shared by `token-server`, `users` and `keys rotate`.
struct TokenServerDataOptions: ParsableArguments {
    @Option(help: "Token server data directory (database and generated keys).") var data: String = "token-server-data"

    var databasePath: String { data + "/token-server.sqlite" }

    /// The existing store; an error naming the command to run first when there is none.
    func existingStore() throws -> TokenServerStore {
        guard FileManager.default.fileExists(atPath: databasePath) else {
            throw CLIError("No token server data in \(data). Start `fleetauth token-server --data \(data)` once first.")
        }
        return try TokenServerStore(path: databasePath)
    }
}

/// A random password of 24 base64url characters (144 bits).
func randomPassword() -> String {
    var generator = SystemRandomNumberGenerator()
    return Base64URL.encode((0..<18).map { _ in UInt8.random(in: 0...255, using: &generator) })
}

struct TokenServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token-server",
        abstract: "Run the token server: app-user login, per-user grants, Fleet Engine tokens on demand.",
        discussion: """
            The first start creates one service-account key per token family (driver, consumer, server, delivery) \
            under DATA/keys unless key files are given, and an operator account whose password is printed once. \
            It writes DATA/emulator-trust.json, which `fleetauth emulator --trust` reads to trust this server's \
            keys by JWK set URL (so rotations reach the emulator without a restart).
            """
    )

    @OptionGroup var storage: TokenServerDataOptions
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free one).") var port: Int = 8788
    @Option(help: "Google Cloud project (Fleet Engine provider) of generated keys.") var project: String =
        "demo-project"
    @Option(help: "Service-account key file for driver tokens (instead of a generated key).") var driverKey: String?
    @Option(help: "Service-account key file for consumer tokens.") var consumerKey: String?
    @Option(help: "Service-account key file for server and fleet-reader tokens.") var serverKey: String?
    @Option(help: "Service-account key file for delivery tokens.") var deliveryKey: String?
    @Option(help: "bcrypt cost of new password hashes (10–16).") var bcryptCost: UInt8 = 12

    func validate() throws {
        if !(10...16).contains(bcryptCost) { throw ValidationError("--bcrypt-cost must be between 10 and 16.") }
    }

    func run() async throws {
        try FileManager.default.createDirectory(atPath: storage.data, withIntermediateDirectories: true)
        var keyFiles: [TokenFamily: String] = [:]
        keyFiles[.driver] = driverKey
        keyFiles[.consumer] = consumerKey
        keyFiles[.server] = serverKey
        keyFiles[.delivery] = deliveryKey
        let store = try TokenServerStore(path: storage.databasePath)
        let server = try await TokenServer(
            store: store, dataDirectory: storage.data, project: project, keyFiles: keyFiles, bcryptCost: bcryptCost)
        if try await store.users().isEmpty {
            let password = randomPassword()
            try await server.login.addUser(AppUser(username: "operator", role: .operator), password: password)
            say("Created operator account \"operator\" with password \(password) (shown once).")
        }
        let host = self.host
        let data = storage.data
        let keyring = server.keyring
        let application = server.application(
            host: host, port: port, logger: EmulatorServer.quietLogger(label: "fleetauth.token-server")
        ) { port in
            let base = "http://\(host):\(port)"
            let trustPath = data + "/emulator-trust.json"
            try? keyring.emulatorTrustFile(baseURL: base).write(toFile: trustPath, atomically: true, encoding: .utf8)
            say("Token server listening on \(base)")
            for entry in keyring.keySetURLs(baseURL: base) { say("  \(entry.family) keys: \(entry.url)") }
            say("Trust it from the emulator: fleetauth emulator --trust \(trustPath)")
        }
        // Retired keys whose tokens have all expired are removed once a minute.
        let services = ServiceGroup(
            configuration: .init(
                services: [application, KeyPruner(keyring: keyring)], gracefulShutdownSignals: [.sigterm, .sigint],
                logger: EmulatorServer.quietLogger(label: "fleetauth.token-server")))
        try await services.run()
    }
}

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract:
            "Manage the token server's app users and grants (works on the data directory, server running or not).",
        subcommands: [Add.self, Grant.self, Revoke.self, List.self, Remove.self]
    )

    /// The grants named on the command line.
    struct GrantOptions: ParsableArguments {
        @Option(help: "Vehicle ID (drivers).") var vehicle: [String] = []
        @Option(help: "Delivery vehicle ID (drivers).") var deliveryVehicle: [String] = []
        @Option(help: "Trip ID (consumers).") var trip: [String] = []
        @Option(help: "Tracking ID (consumers).") var tracking: [String] = []

        var grants: [FleetTokenServer.Grant] {
            vehicle.map { .init(kind: .vehicle, id: $0) }
                + deliveryVehicle.map { .init(kind: .deliveryVehicle, id: $0) }
                + trip.map { .init(kind: .trip, id: $0) } + tracking.map { .init(kind: .tracking, id: $0) }
        }

        /// Applies `change` to every named grant, reporting store errors as CLI errors.
        func apply(
            _ storage: TokenServerDataOptions, verb: String,
            _ change: (TokenServerStore, FleetTokenServer.Grant) async throws -> Void
        ) async throws {
            let store = try storage.existingStore()
            do {
                for grant in grants { try await change(store, grant) }
            } catch let error as TokenServerError {
                throw CLIError(error.message)
            }
            say("\(verb): \(grants.map(\.description).joined(separator: ", ")).")
        }

        func validate() throws {
            if grants.isEmpty {
                throw ValidationError("Name at least one --vehicle, --delivery-vehicle, --trip or --tracking.")
            }
            for grant in grants where grant.id == "*" || !FleetEngineID.isValid(grant.id) {
                throw ValidationError(
                    "\"\(grant.id)\" is not a valid \(grant.kind) ID (1–64 characters, no / : ? , #, not *).")
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user; prints a generated password unless one is given.")
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Username.") var username: String
        @Option(help: "driver, consumer or operator.") var role: String
        @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false
        @Option(help: "bcrypt cost (10–16).") var bcryptCost: UInt8 = 12

        func validate() throws {
            if !(10...16).contains(bcryptCost) { throw ValidationError("--bcrypt-cost must be between 10 and 16.") }
        }

        func run() async throws {
            guard let role = AppUserRole(rawValue: role) else {
                throw CLIError("--role must be one of \(AppUserRole.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            let password: String
            if passwordStdin {
                guard let line = readLine(strippingNewline: true) else {
                    throw CLIError("No password on standard input.")
                }
                password = line
            } else {
                password = randomPassword()
            }
            let login = LoginService(store: try storage.existingStore(), bcryptCost: bcryptCost)
            do {
                try await login.addUser(AppUser(username: username, role: role), password: password)
            } catch let error as TokenServerError {
                throw CLIError(error.message)
            }
            say("Added \(role) \(username)." + (passwordStdin ? "" : " Password: \(password) (shown once)."))
        }
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Grant a user vehicles, trips, delivery vehicles or tracking IDs.")
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Username.") var username: String
        @OptionGroup var grantOptions: GrantOptions

        func run() async throws {
            try await grantOptions.apply(storage, verb: "Granted \(username)") {
                try await $0.addGrant($1, to: username)
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take grants away from a user.")
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Username.") var username: String
        @OptionGroup var grantOptions: GrantOptions

        func run() async throws {
            try await grantOptions.apply(storage, verb: "Revoked from \(username)") {
                try await $0.removeGrant($1, from: username)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users and their grants.")
        @OptionGroup var storage: TokenServerDataOptions

        func run() async throws {
            for (user, grants) in try await storage.existingStore().users() {
                let granted = grants.isEmpty ? "" : "  " + grants.map(\.description).joined(separator: ", ")
                say("\(user.username)  \(user.role)\(granted)")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user with its grants and sessions.")
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Username.") var username: String

        func run() async throws {
            do {
                try await storage.existingStore().removeUser(username)
            } catch let error as TokenServerError {
                throw CLIError(error.message)
            }
            say("Removed \(username).")
        }
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
        @Option(help: "driver, consumer, server, delivery or all.") var family: String = "all"

        func run() async throws {
            let families: [TokenFamily]
            if family == "all" {
                families = TokenFamily.allCases
            } else if let one = TokenFamily(rawValue: family) {
                families = [one]
            } else {
                throw CLIError("--family must be one of driver, consumer, server, delivery, all.")
            }
            let store = try storage.existingStore()
            let records = try await store.keyRecords()
            guard let project = records.first.flatMap({ try? ServiceAccountKey(contentsOf: $0.keyPath).projectID })
            else {
                throw CLIError("No signing keys in \(storage.data).")
            }
            let keyring = try await Keyring(store: store, keyDirectory: storage.data + "/keys", project: project)
            for family in families {
                let old = try keyring.signingKey(for: family).record.kid
                let new = try await keyring.rotate(family)
                say("\(family): new signing key \(new.kid) (previous \(old) published until its tokens expire).")
            }
        }
    }
}
