import Crypto
public import FleetAuthCore
import FleetAuthServerSupport
import Foundation

/// Password login and sessions.
///
/// - Passwords are bcrypt hashes, checked by ``PasswordHasher``: an unknown username costs the same work as a
///   wrong password, and both answer the same 401 body.
/// - Failed logins are throttled per username and per client address (``LoginThrottle``); a throttled attempt is
///   answered 429 with `Retry-After` before any password is checked.
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
    private let clock: any WallClock

    /// The message of every failed login.
    public static let invalidCredentialsMessage = "Invalid username or password."

    public init(
        users: any UserStore,
        sessions: any SessionStore,
        hasher: PasswordHasher = PasswordHasher(),
        sessionLifetime: Duration = .seconds(12 * 3600),
        throttle: LoginThrottle = LoginThrottle(),
        clock: any WallClock = .system
    ) {
        self.users = users
        self.sessions = sessions
        self.hasher = hasher
        self.sessionLifetime = sessionLifetime
        self.throttle = throttle
        self.clock = clock
    }

    /// A new session for `username` and `password`, from `address` (the client's IP, for throttling).
    public func login(username: String, password: String, address: String?) async throws -> Session {
        let started = clock.currentDate
        // A name no user can have (a NUL, a capital, 65 bytes…) never reaches the store or a throttle key: it is an
        // unknown user, throttled by its address, so "dana\u{0}" can neither log in as dana nor dodge her lockout.
        let storable = (try? AppUser.validate(username: username)) != nil
        let throttled = storable ? username : nil
        try await throttle.check(username: throttled, address: address, now: started)
        let credentials = storable ? try await users.credentials(for: username) : nil
        // An unknown user is checked against a dummy hash: the same work as a wrong password.
        let matches = try await hasher.verify(password, against: credentials?.passwordHash)
        guard let credentials, matches, credentials.user.username == username else {
            try await throttle.recordFailure(username: throttled, address: address, now: started)
            throw TokenServerError.unauthenticated(Self.invalidCredentialsMessage)
        }
        try await throttle.recordSuccess(username: username)
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        let token = Base64URL.encode(bytes)
        let created = Date(epochSeconds: started.epochSeconds)
        let expires = created.addingTimeInterval(sessionLifetime.timeInterval)
        try await sessions.addSession(
            SessionRecord(
                tokenHash: Self.hash(sessionToken: token), username: credentials.user.username, createdAt: created,
                expiresAt: expires))
        return Session(token: token, user: credentials.user, expiresAt: expires)
    }

    /// The user of a bearer session token, or 401.
    public func user(sessionToken: String?) async throws -> AppUser {
        try await user(sessionToken: sessionToken, holding: nil).user
    }

    /// The user of a bearer session token (or 401) and whether it holds `grant`, in one database read.
    public func user(sessionToken: String?, holding grant: Grant?) async throws -> (user: AppUser, granted: Bool) {
        guard let sessionToken, !sessionToken.isEmpty, sessionToken.utf8.count <= 256 else {
            throw TokenServerError.unauthenticated("A session is required: \"Authorization: Bearer <session token>\".")
        }
        let found = try await sessions.sessionUser(
            tokenHash: Self.hash(sessionToken: sessionToken), at: clock.currentDate, holding: grant)
        guard let found else { throw TokenServerError.unauthenticated("The session is invalid or has expired.") }
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
