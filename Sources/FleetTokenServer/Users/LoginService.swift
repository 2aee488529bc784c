public import FleetAuthCore
public import Foundation
import HummingbirdBcrypt
import NIOPosix

/// Password login and sessions.
///
/// - Passwords are bcrypt hashes (``bcryptCost``, default 12). Hashing runs on NIO's thread pool, never on the
///   event loops or the cooperative pool.
/// - An unknown username costs the same bcrypt verification as a wrong password (against a dummy hash of the same
///   cost), and both answer the same 401 body.
/// - Failed logins are throttled per username and per client address (``LoginThrottle``); a throttled attempt is
///   answered 429 with `Retry-After` before any password is checked.
/// - A session token is 32 random bytes (base64url); only its SHA-256 is stored. Sessions expire after
///   ``sessionLifetime``.
public final class LoginService: Sendable {
    public let store: TokenServerStore
    public let bcryptCost: UInt8
    public let sessionLifetime: TimeInterval
    public let throttle: LoginThrottle
    private let now: @Sendable () -> Date
    private let dummyHash: String

    /// The message of every failed login.
    public static let invalidCredentialsMessage = "Invalid username or password."

    public init(
        store: TokenServerStore,
        bcryptCost: UInt8 = 12,
        sessionLifetime: TimeInterval = 12 * 3600,
        throttle: LoginThrottle = LoginThrottle(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.bcryptCost = bcryptCost
        self.sessionLifetime = sessionLifetime
        self.throttle = throttle
        self.now = now
        self.dummyHash = Bcrypt.hash("fleetauth-dummy-password", cost: bcryptCost)
    }

    /// A bcrypt hash of `password` at ``bcryptCost``.
    public func hash(password: String) async throws -> String {
        let cost = bcryptCost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Adds a user after checking the username and password rules.
    public func addUser(_ user: AppUser, password: String) async throws {
        try AppUser.validate(username: user.username)
        try AppUser.validate(password: password)
        try await store.addUser(user, passwordHash: try await hash(password: password), now: now())
    }

    /// A new session for `username` and `password`, from `address` (the client's IP, for throttling).
    public func login(username: String, password: String, address: String?) async throws -> Session {
        let started = now()
        try throttle.check(username: username, address: address, now: started)
        let credentials = try await store.credentials(for: username)
        let hash = credentials?.passwordHash ?? dummyHash
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
        guard let credentials, matches else {
            throttle.recordFailure(username: username, address: address, now: started)
            throw TokenServerError.unauthenticated(Self.invalidCredentialsMessage)
        }
        throttle.recordSuccess(username: username)
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        let token = Base64URL.encode(bytes)
        let created = Int64(started.timeIntervalSince1970)
        let expires = created + Int64(sessionLifetime)
        try await store.addSession(
            tokenHash: TokenServerStore.hash(sessionToken: token), username: credentials.user.username,
            createdAt: created, expiresAt: expires)
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
        let found = try await store.sessionUser(
            tokenHash: TokenServerStore.hash(sessionToken: sessionToken), now: Int64(now().timeIntervalSince1970),
            grant: grant)
        guard let found else { throw TokenServerError.unauthenticated("The session is invalid or has expired.") }
        return found
    }

    /// Ends a session.
    public func logout(sessionToken: String) async throws {
        try await store.removeSession(tokenHash: TokenServerStore.hash(sessionToken: sessionToken))
    }
}

/// A logged-in session.
public struct Session: Sendable, Hashable {
    /// The opaque bearer token (shown once; only its hash is stored).
    public let token: String
    public let user: AppUser
    /// Expiry, epoch seconds.
    public let expiresAt: Int64

    public var jsonObject: JSONObject {
        [
            "sessionToken": .string(token),
            "expiresAt": .integer(expiresAt * 1000),
            "username": .string(user.username),
            "role": .string(user.role.rawValue),
        ]
    }
}

/// Throttles failed logins per username and per client address.
///
/// After ``Policy/failuresBeforeLockout`` failures for a username (or ``Policy/addressFailuresBeforeLockout`` from
/// one address) within ``Policy/window``, further attempts are refused for a lockout that starts at
/// ``Policy/initialLockout`` and doubles with every further failure, up to ``Policy/maximumLockout``. A successful
/// login resets its username. At most ``Policy/maximumEntries`` keys are remembered (the oldest go first).
public final class LoginThrottle: @unchecked Sendable {
    public struct Policy: Sendable, Hashable {
        public var failuresBeforeLockout = 5
        public var addressFailuresBeforeLockout = 20
        public var window: TimeInterval = 15 * 60
        public var initialLockout: TimeInterval = 30
        public var maximumLockout: TimeInterval = 15 * 60
        public var maximumEntries = 100_000

        public init() {}
    }

    private struct Entry {
        var failures: Int
        var firstFailure: Date
        var lockedUntil: Date?
    }

    public let policy: Policy
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]

    public init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// Throws 429 when the username or the address is locked out at `now`.
    public func check(username: String, address: String?, now: Date) throws(TokenServerError) {
        let keys = ["user:" + username] + (address.map { ["address:" + $0] } ?? [])
        let until = lock.withLock { keys.compactMap { entries[$0]?.lockedUntil }.filter { $0 > now }.max() }
        if let until {
            throw .tooManyRequests(
                "Too many failed logins; try again later.", retryAfter: Int(until.timeIntervalSince(now).rounded(.up)))
        }
    }

    /// Counts a failed login for the username and the address.
    public func recordFailure(username: String, address: String?, now: Date) {
        lock.withLock {
            count("user:" + username, limit: policy.failuresBeforeLockout, now: now)
            if let address { count("address:" + address, limit: policy.addressFailuresBeforeLockout, now: now) }
            if entries.count > policy.maximumEntries {
                let oldest = entries.min { $0.value.firstFailure < $1.value.firstFailure }?.key
                if let oldest { entries[oldest] = nil }
            }
        }
    }

    /// Forgets the username's failures after a successful login.
    public func recordSuccess(username: String) {
        _ = lock.withLock { entries.removeValue(forKey: "user:" + username) }
    }

    private func count(_ key: String, limit: Int, now: Date) {
        var entry = entries[key] ?? Entry(failures: 0, firstFailure: now, lockedUntil: nil)
        if now.timeIntervalSince(entry.firstFailure) > policy.window, entry.lockedUntil.map({ $0 <= now }) ?? true {
            entry = Entry(failures: 0, firstFailure: now, lockedUntil: nil)
        }
        entry.failures += 1
        if entry.failures >= limit {
            let doublings = Double(min(entry.failures - limit, 20))
            let lockout = min(policy.initialLockout * pow(2, doublings), policy.maximumLockout)
            entry.lockedUntil = now.addingTimeInterval(lockout)
        }
        entries[key] = entry
    }
}
