import Crypto
public import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
public import Foundation
public import Logging
import NIOConcurrencyHelpers

/// Password and ID-token login, and sessions.
///
/// - Passwords are bcrypt hashes, checked by ``PasswordHasher``: an unknown username costs the same work as a
///   wrong password (a dummy hash of the stored hashes' cost), and both answer the same 401 body. A password stored
///   at another cost than the hasher's is re-hashed at its cost when its user logs in.
/// - Failed logins are throttled per username and per client address (``LoginThrottle``): each attempt is reserved
///   (counted as a failure) before its password is checked and given back when it succeeds, so parallel guesses
///   cannot outrun the limit; a throttled attempt is answered 429 with `Retry-After` before any password is checked.
/// - A password login that succeeds also answers a *device token* (OWASP's "device cookie"): 32 random bytes bound
///   to the user, stored as a hash beside the sessions, valid for ``deviceTokenLifetime``. A later login for that
///   user that carries it is exempt from the per-address throttle (one address cannot lock out a user who logged in
///   from that device before — behind a NAT or a proxy, everyone shares an address), though the per-username one
///   still counts its failures. An attacker spraying passwords from one address has no device token for the users
///   it tries, and stays locked out.
/// - An ID token from a configured OpenID Provider (``OpenIDFederation``) logs in the user its identity (`iss` +
///   `sub`) is linked to. Every refusal — a bad token, an unknown issuer, an unlinked identity — is the same 401 as a
///   wrong password, counted by the same throttle (by address; by username too once the token names a user); the
///   reason is logged at `info`, never the token.
/// - A session token is 32 random bytes (base64url); only its SHA-256 is stored. Sessions expire after
///   ``sessionLifetime``.
public final class LoginService: Sendable {
    /// Where credentials are read.
    public let users: any UserStore
    /// Where sessions are kept.
    public let sessions: any SessionStore
    public let hasher: PasswordHasher
    /// How long a session lasts.
    public let sessionLifetime: Duration
    public let throttle: LoginThrottle
    /// The OpenID Providers whose ID tokens log users in, if any.
    public let federation: OpenIDFederation?
    /// Which user each external identity is.
    public let identities: (any IdentityLinkStore)?
    private let clock: any WallClock
    private let logger: Logger
    /// The stored hashes' most common cost, and when it was read.
    private let storedCost: NIOLockedValueBox<(cost: UInt8, readAt: Date?)>

    /// How often the stored hashes' cost is read again (users added by `fleetauth users add` or another instance
    /// while this one runs change it), in seconds.
    public static let storedCostRefreshInterval: TimeInterval = 60

    /// How long a device token is honoured after the login that issued it.
    public static let deviceTokenLifetime: Duration = .seconds(90 * 86_400)

    /// The message of every failed login, by password or by ID token.
    public static let invalidCredentialsMessage = "Invalid credentials."

    public init(
        users: any UserStore,
        sessions: any SessionStore,
        hasher: PasswordHasher = PasswordHasher(),
        sessionLifetime: Duration = .seconds(12 * 3600),
        throttle: LoginThrottle = LoginThrottle(),
        federation: OpenIDFederation? = nil,
        identities: (any IdentityLinkStore)? = nil,
        clock: any WallClock = .system,
        logger: Logger = .silent(label: "fleetauth.token-server")
    ) {
        self.users = users
        self.sessions = sessions
        self.hasher = hasher
        self.sessionLifetime = sessionLifetime
        self.throttle = throttle
        self.federation = federation
        self.identities = identities
        self.clock = clock
        self.logger = logger
        self.storedCost = NIOLockedValueBox((hasher.cost, nil))
    }

    /// The bcrypt cost an unknown user's password is checked at: the highest cost of the stored hashes (the
    /// hasher's own with no users), read again every ``storedCostRefreshInterval``; a wrong password for a user whose
    /// hash has a lower cost is padded to the same work (``PasswordHasher``). Every password login asks, known user or
    /// not, so the occasional read does not tell them apart either.
    public func unknownUserCost(at now: Date) async throws -> UInt8 {
        let known = storedCost.withLockedValue { $0 }
        if let readAt = known.readAt, readAt <= now, now.timeIntervalSince(readAt) < Self.storedCostRefreshInterval {
            return known.cost
        }
        let costs = try await users.passwordHashCosts()
        let cost = costs.keys.max() ?? hasher.cost
        try await hasher.prepareDummy(cost: cost)
        storedCost.withLockedValue { $0 = (cost, now) }
        return cost
    }

    /// Re-hashes a password stored at another cost than the server's, now that it is known, keeping the user's
    /// sessions; a password changed meanwhile is left alone.
    private func rehashIfNeeded(_ password: String, _ credentials: StoredCredentials) async throws {
        guard PasswordHasher.cost(of: credentials.passwordHash) != hasher.cost else { return }
        let upgraded = try await users.upgradePasswordHash(
            try await hasher.hash(password),
            for: credentials.user.username,
            replacing: credentials.passwordHash
        )
        if upgraded {
            logger.info(
                "re-hashed a password at the server's bcrypt cost",
                metadata: .fleetauth(["user": .string(credentials.user.username), "cost": "\(hasher.cost)"])
            )
        }
    }

    /// A new session for `username` and `password`, from `address` (the client's IP, for throttling), with the
    /// device token of an earlier login of this user if the client kept one.
    public func login(username: String, password: String, address: String?, deviceToken: String? = nil) async throws
        -> Session
    {
        let started = clock.currentDate
        // A name no user can have (a NUL, a capital, 65 bytes…) never reaches the store or a throttle key: it is an
        // unknown user, throttled by its address, so "dana\u{0}" can neither log in as dana nor dodge her lockout.
        let storable = (try? AppUser.validate(username: username)) != nil
        let throttled = storable ? username : nil
        // A device this user logged in from before is not held to its address's throttle.
        let knownDevice = storable ? try await isDevice(deviceToken, of: username, at: started) : false
        let throttledAddress = knownDevice ? nil : address
        // The attempt counts as a failure from here until it succeeds, so parallel guesses cannot all be checked.
        try await throttle.reserve(username: throttled, address: throttledAddress, now: started)
        let credentials = storable ? try await users.credentials(for: username) : nil
        // An unknown user is checked against a dummy hash of the stored hashes' cost: the same work as a wrong password.
        let matches = try await hasher.verify(
            password,
            against: credentials?.passwordHash,
            dummyCost: try await unknownUserCost(at: started)
        )
        guard let credentials, matches else { throw GoogleAPIError.unauthenticated(Self.invalidCredentialsMessage) }
        try await throttle.recordSuccess(username: username, address: throttledAddress, now: started)
        try await rehashIfNeeded(password, credentials)
        let session = try await startSession(for: credentials.user, at: started)
        let device = knownDevice ? deviceToken : try await issueDeviceToken(for: credentials.user, at: started)
        return Session(token: session.token, user: session.user, expiresAt: session.expiresAt, deviceToken: device)
    }

    /// The stored form of a device token: its SHA-256 in the sessions' table under a prefix of its own, so it is
    /// never a session (a bearer token is looked up by its plain hash) and goes when the user's sessions go.
    static func hash(deviceToken: String) -> String { "device-" + hash(sessionToken: deviceToken) }

    /// Whether `token` is a device token this server issued to `username` that has not expired.
    private func isDevice(_ token: String?, of username: String, at now: Date) async throws -> Bool {
        guard let token, !token.isEmpty, token.utf8.count <= 256 else { return false }
        let found = try await sessions.sessionUser(tokenHash: Self.hash(deviceToken: token), at: now, holding: nil)
        return found?.user.username == username
    }

    private func issueDeviceToken(for user: AppUser, at started: Date) async throws -> String {
        let token = Self.randomToken()
        let created = Date(epochSeconds: started.epochSeconds)
        try await sessions.addSession(
            SessionRecord(
                tokenHash: Self.hash(deviceToken: token),
                username: user.username,
                createdAt: created,
                expiresAt: created.addingTimeInterval(Self.deviceTokenLifetime.timeInterval)
            )
        )
        return token
    }

    /// 32 random bytes, base64url.
    private static func randomToken() -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// A new session for the user an OpenID Provider's ID token names, from `address`.
    public func login(idToken: String, address: String?) async throws -> Session {
        let started = clock.currentDate
        try await throttle.reserve(username: nil, address: address, now: started)
        guard let federation, let identities else {
            logger.info("ID token refused", metadata: .fleetauth(["reason": "no OpenID Provider is configured"]))
            throw GoogleAPIError.unauthenticated(Self.invalidCredentialsMessage)
        }
        let verified: VerifiedIDToken
        do {
            verified = try await federation.verify(idToken, nowSeconds: started.epochSeconds)
        } catch {
            logger.info(
                "ID token refused",
                metadata: .fleetauth(["reason": .string(error.code.rawValue), "detail": .string(error.message)])
            )
            throw GoogleAPIError.unauthenticated(Self.invalidCredentialsMessage)
        }
        let identity = ExternalIdentity(issuer: verified.issuer, subject: verified.subject)
        var user = try await identities.linkedUser(
            issuer: identity.issuer,
            subject: identity.subject,
            matchingUnqualified: federation.hasSingleIssuer
        )
        if user == nil, let role = federation.autoCreateRole {
            user = try await createUser(for: identity, role: role, identities: identities, at: started)
        }
        guard let user else {
            logger.info(
                "ID token refused",
                metadata: .fleetauth([
                    "reason": "unlinked_identity", "issuer": .string(identity.issuer),
                    "subject": .string(identity.subject),
                ])
            )
            throw GoogleAPIError.unauthenticated(Self.invalidCredentialsMessage)
        }
        // A user locked out by password guesses stays locked out, whatever way it logs in.
        try await throttle.check(username: user.username, address: nil, now: started)
        try await throttle.recordSuccess(username: user.username, address: address, now: started)
        return try await startSession(for: user, at: started)
    }

    /// Creates a user without grants for an identity nobody is linked to (`--oidc-auto-create`): its name is
    /// `oidc-` and 20 hex digits of the identity's SHA-256, its password random and unknown. Two first logins at
    /// once create it once.
    private func createUser(
        for identity: ExternalIdentity,
        role: AppUserRole,
        identities: any IdentityLinkStore,
        at now: Date
    ) async throws -> AppUser? {
        let digest = Self.hash(sessionToken: identity.issuer + "\u{0}" + identity.subject)
        let user = AppUser(username: "oidc-" + digest.prefix(20), role: role)
        do {
            try await identities.addUser(
                user,
                passwordHash: try await hasher.hash(
                    UserDirectory.generatePassword() + UserDirectory.generatePassword()
                ),
                createdAt: Date(epochSeconds: now.epochSeconds),
                identity: identity
            )
            logger.notice(
                "created a user at its first OpenID login",
                metadata: .fleetauth([
                    "user": .string(user.username),
                    "issuer": .string(identity.issuer), "subject": .string(identity.subject),
                ])
            )
            return user
        } catch let error as StoreError where error.code == .alreadyExists {
            return try await identities.linkedUser(
                issuer: identity.issuer,
                subject: identity.subject,
                matchingUnqualified: false
            )
        }
    }

    private func startSession(for user: AppUser, at started: Date) async throws -> Session {
        let token = Self.randomToken()
        let created = Date(epochSeconds: started.epochSeconds)
        let expires = created.addingTimeInterval(sessionLifetime.timeInterval)
        try await sessions.addSession(
            SessionRecord(
                tokenHash: Self.hash(sessionToken: token),
                username: user.username,
                createdAt: created,
                expiresAt: expires
            )
        )
        return Session(token: token, user: user, expiresAt: expires)
    }

    /// The user of a bearer session token, or 401.
    public func user(sessionToken: String?) async throws -> AppUser {
        try await user(sessionToken: sessionToken, holding: nil).user
    }

    /// The user of a bearer session token (or 401) and whether it holds `grant`, in one database read.
    public func user(sessionToken: String?, holding grant: Grant?) async throws -> (user: AppUser, granted: Bool) {
        guard let sessionToken, !sessionToken.isEmpty, sessionToken.utf8.count <= 256 else {
            throw GoogleAPIError.unauthenticated("A session is required: \"Authorization: Bearer <session token>\".")
        }
        let found = try await sessions.sessionUser(
            tokenHash: Self.hash(sessionToken: sessionToken),
            at: clock.currentDate,
            holding: grant
        )
        guard let found else { throw GoogleAPIError.unauthenticated("The session is invalid or has expired.") }
        return found
    }

    /// Ends a session.
    public func logout(sessionToken: String) async throws {
        try await sessions.removeSession(tokenHash: Self.hash(sessionToken: sessionToken))
    }

    /// The stored form of a session token: its SHA-256, lowercase hex.
    public static func hash(sessionToken: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Array(sessionToken.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
