public import Foundation
import NIOConcurrencyHelpers

/// The failed-login counts behind ``LoginThrottle``, kept where every instance of the token server sees them and
/// a restart does not forget them.
///
/// Keys are strings such as `user:dana` or `address:192.0.2.7`. An entry is kept until its ``ThrottleEntry/forgetAfter``
/// time, when it can neither lock nor count any more; there is no size bound to evict by, so no flood of other
/// keys can unlock one.
public protocol LoginThrottleStore: Sendable {
    /// The entries of `keys` that are still kept at `now`.
    func throttleEntries(keys: [String], at now: Date) async throws -> [String: ThrottleEntry]
    /// Replaces the entries of `keys` with what `update` makes of them, in one transaction that excludes every other
    /// update of those keys (from any instance); `update` gets the entries still kept at `now` and returns the
    /// entries to store. Entries forgotten by `now` are removed.
    func updateThrottleEntries(
        keys: [String],
        at now: Date,
        _ update: @escaping @Sendable (_ current: [String: ThrottleEntry]) -> [String: ThrottleEntry]
    ) async throws
    /// Forgets the entries of `keys`.
    func removeThrottleEntries(keys: [String]) async throws
}

/// Failed logins of one key.
public struct ThrottleEntry: Sendable, Hashable {
    /// Failures counted in the current window.
    public var failures: Int
    /// The first failure of the window.
    public var firstFailure: Date
    /// When the lockout ends, if the key is locked.
    public var lockedUntil: Date?
    /// When the entry no longer matters: its window has passed and its lockout has ended.
    public var forgetAfter: Date

    public init(failures: Int, firstFailure: Date, lockedUntil: Date?, forgetAfter: Date) {
        self.failures = failures
        self.firstFailure = firstFailure
        self.lockedUntil = lockedUntil
        self.forgetAfter = forgetAfter
    }
}

/// A ``LoginThrottleStore`` in this process's memory, for a ``LoginService`` used without a database. Entries are
/// dropped only when forgotten, never to make room.
public final class InMemoryLoginThrottleStore: LoginThrottleStore {
    private let entries = NIOLockedValueBox<[String: ThrottleEntry]>([:])

    public init() {}

    public func throttleEntries(keys: [String], at now: Date) async throws -> [String: ThrottleEntry] {
        entries.withLockedValue { entries in
            keys.reduce(into: [:]) { found, key in found[key] = entries[key].flatMap { $0.forgetAfter > now ? $0 : nil }
            }
        }
    }

    public func updateThrottleEntries(
        keys: [String],
        at now: Date,
        _ update: @escaping @Sendable ([String: ThrottleEntry]) -> [String: ThrottleEntry]
    ) async throws {
        entries.withLockedValue { entries in
            entries = entries.filter { $0.value.forgetAfter > now }
            let current = keys.reduce(into: [String: ThrottleEntry]()) { $0[$1] = entries[$1] }
            for (key, entry) in update(current) { entries[key] = entry }
        }
    }

    public func removeThrottleEntries(keys: [String]) async throws {
        entries.withLockedValue { entries in for key in keys { entries[key] = nil } }
    }
}
