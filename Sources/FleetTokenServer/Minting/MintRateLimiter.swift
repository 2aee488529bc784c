public import FleetAuthCore
import FleetAuthServerCore
import Foundation
import NIOConcurrencyHelpers

/// Limits how fast tokens are minted: a token bucket per user and resource, and one per user across all of its
/// resources, kept in this instance's memory.
///
/// An app reuses a token until it nears expiry, so it needs about one per hour per vehicle or trip; a session that
/// asks hundreds of times a second costs an RSA signature and an audit row each. Each request takes one token
/// from both of its buckets; when either is empty the answer is 429 `RESOURCE_EXHAUSTED` with `Retry-After` (the
/// seconds until it holds one again), and nothing is signed or audited. Buckets refill continuously; a full one is
/// forgotten, so memory follows the users minting now, not every user ever seen. Refills are measured on the
/// injected clock's monotonic half, so a step of the time of day (back or forward) neither holds a bucket empty
/// with a false `Retry-After` nor fills it.
public final class MintRateLimiter: Sendable {
    /// How fast tokens may be minted.
    public struct Policy: Sendable, Hashable {
        /// Tokens per minute, sustained, for one user and one resource (a vehicle, a trip, a tracking ID, or one
        /// type of fleet-wide token); 0 turns the limit off.
        public var perMinute: Double
        /// How many a user may get at once for one resource before the rate applies.
        public var burst: Int
        /// A user's bucket across all of its resources holds and refills this many times more.
        public var userMultiplier: Double

        public init(perMinute: Double = 6, burst: Int = 10, userMultiplier: Double = 10) {
            self.perMinute = perMinute
            self.burst = burst
            self.userMultiplier = userMultiplier
        }

        /// No limit.
        public static let unlimited = Policy(perMinute: 0)
    }

    private struct Bucket {
        var tokens: Double
        /// Seconds on the monotonic clock.
        var updated: Double
    }

    public let policy: Policy
    private let buckets = NIOLockedValueBox<(buckets: [String: Bucket], operations: Int)>(([:], 0))
    /// Seconds since the limiter was made, on the clock's monotonic half.
    private let elapsed: @Sendable () -> Double

    /// - Parameters:
    ///   - policy: how fast tokens may be minted.
    ///   - clock: the clock whose monotonic time (`now`, never the time of day) measures refills.
    public init(policy: Policy = Policy(), clock: any WallClock = .system) {
        self.policy = policy
        self.elapsed = clock.stopwatch()
    }

    /// Takes a token for `username` minting for `resource` now, or throws 429 with `Retry-After`.
    public func acquire(username: String, resource: String) throws(GoogleAPIError) {
        guard policy.perMinute > 0 else { return }
        let now = elapsed()
        let policy = self.policy
        let keys = [
            (
                key: "r\u{0}" + username + "\u{0}" + resource, capacity: Double(max(policy.burst, 1)),
                perSecond: policy.perMinute / 60
            ),
            (
                key: "u\u{0}" + username,
                capacity: Double(max(policy.burst, 1)) * policy.userMultiplier,
                perSecond: policy.perMinute * policy.userMultiplier / 60
            ),
        ]
        let wait: Double? = buckets.withLockedValue { state in
            state.operations += 1
            if state.operations % 1024 == 0 { Self.forgetFull(&state.buckets, policy: policy, now: now) }
            var refilled: [Bucket] = []
            var wait = 0.0
            for (key, capacity, perSecond) in keys {
                var bucket = state.buckets[key] ?? Bucket(tokens: capacity, updated: now)
                let elapsed = max(0, now - bucket.updated)
                bucket.tokens = min(capacity, bucket.tokens + elapsed * perSecond)
                bucket.updated = max(bucket.updated, now)
                if bucket.tokens < 1 { wait = max(wait, (1 - bucket.tokens) / perSecond) }
                refilled.append(bucket)
            }
            for (index, (key, _, _)) in keys.enumerated() {
                var bucket = refilled[index]
                if wait == 0 { bucket.tokens -= 1 }
                state.buckets[key] = bucket
            }
            return wait > 0 ? wait : nil
        }
        if let wait {
            throw .tooManyRequests(
                "Too many tokens requested; reuse the one you have until it nears expiry.",
                retryAfter: max(1, Int(wait.rounded(.up)))
            )
        }
    }

    /// How many buckets are kept now.
    public var bucketCount: Int { buckets.withLockedValue { $0.buckets.count } }

    /// Drops the buckets that have refilled: they hold what a new one would.
    private static func forgetFull(_ buckets: inout [String: Bucket], policy: Policy, now: Double) {
        let perSecond = policy.perMinute / 60
        let capacity = Double(max(policy.burst, 1))
        buckets = buckets.filter { key, bucket in
            let scale = key.hasPrefix("u") ? policy.userMultiplier : 1
            let elapsed = max(0, now - bucket.updated)
            return bucket.tokens + elapsed * perSecond * scale < capacity * scale
        }
    }
}
