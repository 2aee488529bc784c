import FleetAuthServerCore
public import Foundation
import NIOConcurrencyHelpers

/// Throttles failed logins per username and per client address.
///
/// After ``Policy/failuresBeforeLockout`` failures for a username (or ``Policy/addressFailuresBeforeLockout`` from
/// one address) within ``Policy/window``, further attempts are refused for a lockout that starts at
/// ``Policy/initialLockout`` and doubles with every further failure, up to ``Policy/maximumLockout``. A successful
/// login resets its username. The counts live in a ``LoginThrottleStore`` — the token server's database — so a
/// lockout holds on every instance and across restarts, and an entry is only forgotten once it can no longer lock.
public final class LoginThrottle: Sendable {
    /// When to lock out, and for how long.
    public struct Policy: Sendable, Hashable {
        /// Failures for one username that lock it.
        public var failuresBeforeLockout = 5
        /// Failures from one client address that lock it.
        public var addressFailuresBeforeLockout = 20
        /// How long failures are counted together, in seconds.
        public var window: TimeInterval = 15 * 60
        /// The first lockout, in seconds; it doubles with every further failure.
        public var initialLockout: TimeInterval = 30
        /// The longest lockout, in seconds.
        public var maximumLockout: TimeInterval = 15 * 60

        public init() {}
    }

    public let policy: Policy
    /// Where the counts are kept.
    public let store: any LoginThrottleStore

    public init(policy: Policy = Policy(), store: any LoginThrottleStore = InMemoryLoginThrottleStore()) {
        self.policy = policy
        self.store = store
    }

    private static func keys(username: String?, address: String?) -> [String] {
        (username.map { ["user:" + $0] } ?? []) + (address.map { ["address:" + $0] } ?? [])
    }

    /// Throws 429 when the username or the address is locked out at `now`. A nil username (one no user can have)
    /// is checked by its address only.
    public func check(username: String?, address: String?, now: Date) async throws {
        let entries = try await store.throttleEntries(keys: Self.keys(username: username, address: address), at: now)
        if let until = entries.values.compactMap(\.lockedUntil).filter({ $0 > now }).max() {
            throw GoogleAPIError.tooManyRequests(
                "Too many failed logins; try again later.",
                retryAfter: Int(until.timeIntervalSince(now).rounded(.up))
            )
        }
    }

    /// Reserves one login attempt before its credentials are checked: throws 429 when the username or the address
    /// is locked out at `now`, and otherwise counts the attempt as a failure of both, in the same transaction.
    ///
    /// Checking first and counting after the ~250 ms password hash lets parallel guesses all be checked before any
    /// is counted; reserving makes the check and the count one step, so however many guesses arrive at once (at one
    /// instance or many), at most the limit of them is ever evaluated. A login that succeeds gives its reservation
    /// back with ``recordSuccess(username:address:now:)``.
    public func reserve(username: String?, address: String?, now: Date) async throws {
        let policy = self.policy
        let keys = Self.keys(username: username, address: address)
        guard !keys.isEmpty else { return }
        let lockedUntil = NIOLockedValueBox<Date?>(nil)
        try await store.updateThrottleEntries(keys: keys, at: now) { current in
            let until = current.values.compactMap(\.lockedUntil).filter { $0 > now }.max()
            lockedUntil.withLockedValue { $0 = until }
            return until == nil ? Self.counted(current, username: username, address: address, policy, now) : [:]
        }
        if let until = lockedUntil.withLockedValue({ $0 }) {
            throw GoogleAPIError.tooManyRequests(
                "Too many failed logins; try again later.",
                retryAfter: Int(until.timeIntervalSince(now).rounded(.up))
            )
        }
    }

    /// Counts a failed login for the username (unless nil) and the address.
    public func recordFailure(username: String?, address: String?, now: Date) async throws {
        let policy = self.policy
        let keys = Self.keys(username: username, address: address)
        guard !keys.isEmpty else { return }
        try await store.updateThrottleEntries(keys: keys, at: now) { current in
            Self.counted(current, username: username, address: address, policy, now)
        }
    }

    /// Forgets the username's failures after a successful login.
    public func recordSuccess(username: String) async throws {
        try await store.removeThrottleEntries(keys: ["user:" + username])
    }

    /// After a successful login whose attempt was reserved: forgets the username's failures and gives the address
    /// back the failure its reservation counted (lifting a lockout that reservation set).
    public func recordSuccess(username: String, address: String?, now: Date) async throws {
        try await recordSuccess(username: username)
        guard let address else { return }
        let key = "address:" + address
        let limit = policy.addressFailuresBeforeLockout
        try await store.updateThrottleEntries(keys: [key], at: now) { current in
            guard var entry = current[key], entry.failures > 0 else { return [:] }
            entry.failures -= 1
            if entry.failures < limit { entry.lockedUntil = nil }
            return [key: entry]
        }
    }

    private static func counted(
        _ current: [String: ThrottleEntry],
        username: String?,
        address: String?,
        _ policy: Policy,
        _ now: Date
    ) -> [String: ThrottleEntry] {
        var updated: [String: ThrottleEntry] = [:]
        if let username {
            let key = "user:" + username
            updated[key] = counting(current[key], limit: policy.failuresBeforeLockout, policy, now)
        }
        if let address {
            let key = "address:" + address
            updated[key] = counting(current[key], limit: policy.addressFailuresBeforeLockout, policy, now)
        }
        return updated
    }

    private static func counting(_ entry: ThrottleEntry?, limit: Int, _ policy: Policy, _ now: Date) -> ThrottleEntry {
        var entry = entry ?? ThrottleEntry(failures: 0, firstFailure: now, lockedUntil: nil, forgetAfter: now)
        if now.timeIntervalSince(entry.firstFailure) > policy.window, entry.lockedUntil.map({ $0 <= now }) ?? true {
            entry = ThrottleEntry(failures: 0, firstFailure: now, lockedUntil: nil, forgetAfter: now)
        }
        entry.failures += 1
        if entry.failures >= limit {
            let doublings = Double(min(entry.failures - limit, 20))
            let lockout = min(policy.initialLockout * pow(2, doublings), policy.maximumLockout)
            entry.lockedUntil = now.addingTimeInterval(lockout)
        }
        let windowEnd = entry.firstFailure.addingTimeInterval(policy.window)
        entry.forgetAfter = max(windowEnd, entry.lockedUntil ?? windowEnd)
        return entry
    }
}
