import ArgumentParser
import FleetAuthCore
import FleetAuthServerCore
import FleetTokenServer
import Foundation

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract:
            "Manage the token server's app users and grants (works on the data directory, server running or not).",
        subcommands: [Add.self, AddService.self, Link.self, Grant.self, Revoke.self, List.self, Remove.self]
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

        /// Applies `change` to every named grant, reporting refusals as CLI errors.
        func apply(
            _ storage: TokenServerDataOptions,
            verb: String,
            _ change: (UserDirectory, FleetTokenServer.Grant) async throws -> Void
        ) async throws {
            try await storage.withDirectory { directory in
                try await reportingRefusals {
                    for grant in grants { try await change(directory, grant) }
                }
            }
            say("\(verb): \(grants.map(\.description).joined(separator: ", ")).")
        }

        func validate() throws {
            if grants.isEmpty {
                throw ValidationError("Name at least one --vehicle, --delivery-vehicle, --trip or --tracking.")
            }
            for grant in grants where grant.id == "*" || !FleetEngineID.isValid(grant.id) {
                throw ValidationError(
                    "\"\(grant.id)\" is not a valid \(grant.kind) ID (1–64 characters, no / : ? , #, not *)."
                )
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user; prints a generated password unless one is given."
        )
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Username.") var username: String
        @Option(help: "driver, consumer or operator.") var role: String
        @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false
        @Option(help: "bcrypt cost (10–16).") var bcryptCost: UInt8 = 12
        @OptionGroup var identity: IdentityOptions

        func validate() throws {
            if !(10...16).contains(bcryptCost) { throw ValidationError("--bcrypt-cost must be between 10 and 16.") }
            if identity.subject != nil, passwordStdin {
                throw ValidationError("A user with --subject logs in with ID tokens: no --password-stdin.")
            }
        }

        func run() async throws {
            guard let role = AppUserRole(rawValue: role) else {
                throw CLIError("--role must be one of \(AppUserRole.names).")
            }
            if let linked = identity.identity {
                try await storage.withDirectory(bcryptCost: bcryptCost) { directory in
                    try await reportingRefusals {
                        try await directory.addUser(AppUser(username: username, role: role), identity: linked)
                    }
                }
                say("Added \(role) \(username), who logs in with ID tokens of \(linked).")
                return
            }
            let password: String
            if passwordStdin {
                guard let line = readLine(strippingNewline: true) else {
                    throw CLIError("No password on standard input.")
                }
                password = line
            } else {
                password = UserDirectory.generatePassword()
            }
            try await storage.withDirectory(bcryptCost: bcryptCost) { directory in
                try await reportingRefusals {
                    try await directory.addUser(AppUser(username: username, role: role), password: password)
                }
            }
            say("Added \(role) \(username)." + (passwordStdin ? "" : " Password: \(password) (shown once)."))
        }
    }

    /// An OpenID identity named on the command line.
    struct IdentityOptions: ParsableArguments {
        @Option(help: "The user's sub at the OpenID Provider: the user logs in with its ID tokens, not a password.")
        var subject: String?
        @Option(
            help: """
                The provider's issuer (its ID tokens' iss); without it, the token server's only --oidc-issuer.
                """
        )
        var issuer: String?

        var identity: ExternalIdentity? { subject.map { ExternalIdentity(issuer: issuer ?? "", subject: $0) } }

        func validate() throws {
            if issuer != nil, subject == nil { throw ValidationError("--issuer goes with --subject.") }
            if let identity {
                do { try UserDirectory.validate(identity) } catch { throw ValidationError(error.message) }
            }
        }
    }

    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Link an OpenID identity to an existing user, who may then log in with its ID tokens."
        )
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Username.") var username: String
        @OptionGroup var identity: IdentityOptions

        func validate() throws {
            if identity.subject == nil { throw ValidationError("Give the identity's --subject (and --issuer).") }
        }

        func run() async throws {
            guard let linked = identity.identity else { return }
            try await storage.withDirectory { directory in
                try await reportingRefusals { try await directory.link(linked, to: username) }
            }
            say("Linked \(linked) to \(username).")
        }
    }

    struct AddService: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-service",
            abstract: "Add a service account for a backend that manages grants; prints its API key once.",
            discussion: """
                The key goes in `Authorization: Bearer KEY` on POST /v1/admin/users/{user}/grants and DELETE \
                /v1/admin/users/{user}/grants/{kind}/{id}; it can do nothing else (no tokens, no other admin call). \
                Only its SHA-256 is stored. `fleetauth users remove NAME` revokes it.
                """
        )
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Service account name (like a username).") var name: String

        func run() async throws {
            let key = try await storage.withDirectory { directory in
                try await reportingRefusals { try await directory.addServiceAccount(name) }
            }
            say("Added service account \(name). API key (shown once): \(key)")
        }
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Grant a user vehicles, trips, delivery vehicles or tracking IDs."
        )
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Username.") var username: String
        @OptionGroup var grantOptions: GrantOptions

        func run() async throws {
            try await grantOptions.apply(storage, verb: "Granted \(username)") {
                try await $0.grant($1, to: username)
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
                try await $0.revoke($1, from: username)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users and their grants.")
        @OptionGroup var storage: TokenServerDataOptions

        func run() async throws {
            let (records, identities) = try await storage.withDirectory { directory in
                (try await directory.users(), try await directory.identities())
            }
            for record in records {
                let granted =
                    record.grants.isEmpty ? "" : "  " + record.grants.map(\.description).joined(separator: ", ")
                let linked = (identities[record.user.username] ?? []).map { "  identity \($0)" }.joined()
                say("\(record.user.username)  \(record.user.role)\(granted)\(linked)")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user with its grants and sessions.")
        @OptionGroup var storage: TokenServerDataOptions
        @Argument(help: "Username.") var username: String

        func run() async throws {
            try await storage.withDirectory { directory in
                try await reportingRefusals { try await directory.removeUser(username) }
            }
            say("Removed \(username).")
        }
    }
}
