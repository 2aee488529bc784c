public import FleetAuthServerSupport
public import Foundation

/// Throttles failed logins per username and per client address.
///
/// After ``Policy/failuresBeforeLockout`` failures for a username (or ``Policy/addressFailuresBeforeLockout`` from
/// one address) within ``Policy/window``, further attempts are refused for a lockout that starts at
/// ``Policy/initialLockout`` and doubles with every further failure, up to ``Policy/maximumLockout``. A successful
/// login resets its username. At most ``Policy/maximumEntries`` keys are remembered (the oldest go first).
public final class LoginThrottle: @unchecked Sendable {
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
        /// The most usernames and addresses remembered.
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
