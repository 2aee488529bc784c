public import FleetAuthCore
import FleetAuthServerCore
import Foundation

/// The app users and what they are granted: the one place the admin API and `fleetauth users` change them, so the
/// username and password rules and the grant rules hold whichever way a change comes in.
public struct UserDirectory: Sendable {
    /// Where users and grants (and service accounts' API keys, as sessions that do not expire) are kept.
    public let store: any UserStore & SessionStore & IdentityLinkStore
    /// Hashes new passwords.
    public let hasher: PasswordHasher
    private let clock: any WallClock

    public init(
        store: any UserStore & SessionStore & IdentityLinkStore,
        hasher: PasswordHasher = PasswordHasher(),
        clock: any WallClock = .system
    ) {
        self.store = store
        self.hasher = hasher
        self.clock = clock
    }

    /// Adds a user after checking the username and password rules; `already_exists` if the name is taken. Service
    /// accounts are added by ``addServiceAccount(_:)``.
    public func addUser(_ user: AppUser, password: String) async throws {
        guard user.role != .service else {
            throw GoogleAPIError.invalidArgument(
                "A service account has an API key, not a password: create it with `fleetauth users add-service`."
            )
        }
        try AppUser.validate(username: user.username)
        try AppUser.validate(password: password)
        try await store.addUser(user, passwordHash: try await hasher.hash(password), createdAt: clock.currentDate)
    }

    /// Adds a user who logs in with an ID token of `identity` (and has a random password nobody knows), in one
    /// transaction: `already_exists` if the name is taken or the identity linked.
    public func addUser(_ user: AppUser, identity: ExternalIdentity) async throws {
        guard user.role != .service else {
            throw GoogleAPIError.invalidArgument("A service account has an API key, not an OpenID identity.")
        }
        try AppUser.validate(username: user.username)
        try Self.validate(identity)
        try await store.addUser(
            user,
            passwordHash: try await hasher.hash(Self.generatePassword() + Self.generatePassword()),
            createdAt: clock.currentDate,
            identity: identity
        )
    }

    /// Links `identity` to an existing user, who may then log in with its ID tokens.
    public func link(_ identity: ExternalIdentity, to username: String) async throws {
        try Self.validate(identity)
        guard let user = try await store.credentials(for: username)?.user else {
            throw StoreError.notFound("User \(username) not found.")
        }
        guard user.role != .service else {
            throw GoogleAPIError.invalidArgument("A service account has an API key, not an OpenID identity.")
        }
        try await store.linkIdentity(identity, to: username)
    }

    /// Checks an identity: `sub` of 1–255 characters without control characters; the issuer empty (the server's
    /// only issuer) or an `https://` URL (`http://` on loopback).
    public static func validate(_ identity: ExternalIdentity) throws(GoogleAPIError) {
        let subject = identity.subject
        guard !subject.isEmpty, subject.utf8.count <= 255,
            subject.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else { throw .invalidArgument("subject must be 1–255 characters without control characters.") }
        guard identity.issuer.isEmpty || OpenIDProviderConfiguration.isAllowedURL(identity.issuer) else {
            throw .invalidArgument(
                "issuer must be an https:// URL (http:// only on loopback), as its ID tokens' iss reads."
            )
        }
    }

    /// Every identity linked to a user, by username.
    public func identities() async throws -> [String: [ExternalIdentity]] {
        try await store.identities()
    }

    /// The prefix of every service API key, so secret scanners and people can tell one at a glance.
    public static let serviceKeyPrefix = "fleetauth_service_"

    /// Adds a service account — a backend that manages grants through the admin API — and returns its API key, to
    /// be shown once. The key is 32 random bytes; only its SHA-256 is stored, as a session of the account that never
    /// expires, so it is checked exactly like a session and revoked by removing the account. The account has a
    /// random password nobody knows: it cannot log in.
    public func addServiceAccount(_ name: String) async throws -> String {
        try AppUser.validate(username: name)
        let created = clock.currentDate
        try await store.addUser(
            AppUser(username: name, role: .service),
            passwordHash: try await hasher.hash(Self.generatePassword() + Self.generatePassword()),
            createdAt: created
        )
        var generator = SystemRandomNumberGenerator()
        let key =
            Self.serviceKeyPrefix + Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try await store.addSession(
            SessionRecord(
                tokenHash: LoginService.hash(sessionToken: key),
                username: name,
                createdAt: Date(epochSeconds: created.epochSeconds),
                expiresAt: Self.serviceKeyExpiry
            )
        )
        return key
    }

    /// When service keys expire: never, in practice (the last second of year 9999).
    static let serviceKeyExpiry = Date(epochSeconds: 253_402_300_799)

    /// Deletes a user with its grants and sessions.
    public func removeUser(_ username: String) async throws {
        try await store.removeUser(username)
    }

    /// Grants `grant` to a user whose role may hold it (idempotent): `not_found` for an unknown user,
    /// `INVALID_ARGUMENT` for a grant the role cannot hold (a driver cannot be granted a trip).
    public func grant(_ grant: Grant, to username: String) async throws {
        guard let user = try await store.credentials(for: username)?.user else {
            throw StoreError.notFound("User \(username) not found.")
        }
        guard user.role.grantKinds.contains(grant.kind) else {
            let allowed = user.role.grantKinds.map(\.rawValue).joined(separator: ", ")
            throw GoogleAPIError.invalidArgument(
                "A \(user.role) cannot be granted a \(grant.kind); allowed: \(allowed.isEmpty ? "none" : allowed)."
            )
        }
        // Roles never change, so the check above still holds when the grant is written.
        try await store.addGrant(grant, to: username)
    }

    /// Takes a grant away; `not_found` if the user does not hold it.
    public func revoke(_ grant: Grant, from username: String) async throws {
        try await store.removeGrant(grant, from: username)
    }

    /// Every user with its grants, by username.
    public func users() async throws -> [UserRecord] {
        try await store.users()
    }

    /// A random password of 24 base64url characters (144 bits), for accounts created without one.
    public static func generatePassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<18).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
