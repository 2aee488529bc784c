import FleetAuthCore

/// The decisions of ``CachingTokenProvider`` for one authorization context, without I/O: whether a caller is
/// served, waits, or fails; when a fetch starts; what a finished fetch does to the cache; what a 401 does. The
/// provider holds one per context under its lock and carries out the returned actions (resuming callers, starting
/// fetch tasks, emitting events); this struct never suspends, sleeps or reads a clock, so every rule is tested by
/// feeding it times and outcomes.
///
/// The rules, in the provider's words:
///
/// 1. **Fresh** — at least ``TokenCachePolicy/refreshMargin`` left: the token is served.
/// 2. **Stale** — less than the margin but more than ``TokenCachePolicy/minimumLifetime`` left: the token is served, and one
///    background fetch starts unless one is in flight or the entry is backing off.
/// 3. **Expiring or empty** — at or below the minimum lifetime, or no token: the caller waits for the fetch in
///    flight, or starts one. While backing off after a failure, it fails at once with the last error instead.
/// 4. **Single flight** — at most one fetch per context. Its result goes to every waiter; a waiter that is
///    cancelled is removed alone, and never cancels the fetch.
/// 5. **Monotonic expiry** — a token expires at the instant its fetch *started* plus its lifetime (`exp − iat`,
///    both the server's clock), so a wrong device clock or a slow network never makes a token look fresher than
///    it is. A token that arrives with the minimum lifetime or less left is a `lifetime_too_short` failure, never a
///    refetch loop.
/// 6. **Compare-and-invalidate** — a 401 drops the cached token only if it is the one rejected, so a storm of
///    401s on one token causes one refresh. The rejected token is remembered: a fetch that started *before* the
///    invalidation and brings it back is repeated once for the same waiters (the server may have answered from a
///    cache); a fetch started after it that still returns it is a `rejected_token_returned` failure.
/// 7. **Backoff** — a failed fetch backs off (``TokenCachePolicy/retryDelay(afterFailures:jitter:)``); a still-valid token
///    keeps being served meanwhile; a success or a new 401 ends the backoff.
public struct TokenCacheState<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The thresholds and backoff of a provider.
    public typealias Policy = TokenCachePolicy

    /// Identifies a waiting caller or a fetch; the provider allocates them from one counter, so an identifier is
    /// never reused, not even after ``reset()``.
    public typealias ID = UInt64

    /// What to do with a caller that asked for a token.
    public enum RequestAction: Sendable, Hashable {
        /// Hand out this token now.
        case serve(String)
        /// Hand out this token now, and start fetch `fetch` in the background (rule 2).
        case serveAndRefresh(String, fetch: ID)
        /// The caller waits for the fetch in flight; `startFetch` is the fetch to start first, if there was none.
        case wait(startFetch: ID?)
        /// Fail the caller at once.
        case fail(FleetTokenError)
    }

    /// What to do when a fetch ends.
    public enum CompletionAction: Sendable, Hashable {
        /// Not the fetch in flight (the cache was reset): nothing to do.
        case ignore
        /// Start fetch `ID` for the same waiters: an older fetch returned the rejected token (rule 6).
        case refetch(ID)
        /// The token is cached; hand it to these waiters.
        case deliver(String, lifetime: Duration, to: [ID])
        /// The fetch failed (the entry now backs off); fail these waiters.
        case fail(FleetTokenError, waiters: [ID])
    }

    private struct Token: Sendable, Hashable {
        var jwt: String
        var expiresAt: Instant
    }

    private enum Fetch: Sendable, Hashable {
        case idle
        /// A fetch in flight, and whether it started before the cached token was invalidated.
        case inFlight(ID, predatesInvalidation: Bool)
    }

    public let policy: Policy
    private var token: Token?
    private var fetch = Fetch.idle
    private var waiters: [ID] = []
    /// The last few tokens Fleet Engine rejected.
    private var rejected: [String] = []
    private var failures = 0
    private var retryAt: Instant?
    private var lastError: FleetTokenError?

    public init(policy: Policy) {
        self.policy = policy
    }

    /// The cached token when it is fresh at `now` (rule 1): the provider's lock-and-lookup fast path.
    public func freshToken(at now: Instant) -> String? {
        guard let token, now.duration(to: token.expiresAt) >= policy.refreshMargin else { return nil }
        return token.jwt
    }

    /// Whether a fetch is in flight.
    public var isFetching: Bool { fetch != .idle }

    /// The callers waiting for the fetch in flight.
    public var waiting: [ID] { waiters }

    /// A caller asks for a token at `now`.
    ///
    /// - Parameters:
    ///   - waiter: the caller's identifier, should it have to wait.
    ///   - now: the time on the provider's clock.
    ///   - isCancelled: whether the caller is already cancelled (it is then never made to wait).
    ///   - newFetch: the identifier for a fetch, should one start.
    public mutating func request(waiter: ID, at now: Instant, isCancelled: Bool, newFetch: ID) -> RequestAction {
        if let token, now.duration(to: token.expiresAt) > policy.minimumLifetime {
            if now.duration(to: token.expiresAt) < policy.refreshMargin, fetch == .idle, !isBackingOff(at: now) {
                fetch = .inFlight(newFetch, predatesInvalidation: false)
                return .serveAndRefresh(token.jwt, fetch: newFetch)
            }
            return .serve(token.jwt)
        }
        if isCancelled { return .fail(FleetTokenError(.cancelled, "The caller was cancelled.")) }
        var started: ID?
        if fetch == .idle {
            if isBackingOff(at: now), let lastError { return .fail(lastError) }
            fetch = .inFlight(newFetch, predatesInvalidation: false)
            started = newFetch
        }
        waiters.append(waiter)
        return .wait(startFetch: started)
    }

    private func isBackingOff(at now: Instant) -> Bool {
        retryAt.map { now < $0 } ?? false
    }

    /// A waiting caller was cancelled: whether it was waiting (the provider then fails it with `cancelled`).
    public mutating func cancel(waiter: ID) -> Bool {
        guard let index = waiters.firstIndex(of: waiter) else { return false }
        waiters.remove(at: index)
        return true
    }

    /// Fetch `id`, started at `startedAt`, ended at `now` with `result`: the token and its lifetime, or the error.
    ///
    /// - Parameters:
    ///   - id: the fetch that ended.
    ///   - startedAt: when it started, on the provider's clock (the token's lifetime runs from here).
    ///   - result: the token and its lifetime, or why the fetch failed.
    ///   - now: when it ended.
    ///   - newFetch: the identifier for a fetch, should one have to start again.
    ///   - jitter: the factor, between 0.5 and 1, that spreads retries of many clients after a failure.
    public mutating func fetchFinished(
        _ id: ID,
        startedAt: Instant,
        result: Result<(jwt: String, lifetime: Duration), FleetTokenError>,
        at now: Instant,
        newFetch: ID,
        jitter: Double
    ) -> CompletionAction {
        guard case .inFlight(id, let predatesInvalidation) = fetch else { return .ignore }
        fetch = .idle
        var outcome = result
        if case .success(let fetched) = outcome, rejected.contains(fetched.jwt) {
            if predatesInvalidation {
                fetch = .inFlight(newFetch, predatesInvalidation: false)
                return .refetch(newFetch)
            }
            outcome = .failure(
                FleetTokenError(
                    .rejectedTokenReturned,
                    "The token endpoint answered with the token Fleet Engine rejected."
                )
            )
        }
        if case .success(let fetched) = outcome {
            let expiresAt = startedAt.advanced(by: fetched.lifetime)
            let left = now.duration(to: expiresAt)
            if left <= policy.minimumLifetime {
                outcome = .failure(
                    FleetTokenError(
                        .lifetimeTooShort,
                        "The new token has \(left) left, not more than the minimum \(policy.minimumLifetime)."
                    )
                )
            } else {
                token = Token(jwt: fetched.jwt, expiresAt: expiresAt)
                failures = 0
                retryAt = nil
                lastError = nil
            }
        }
        let woken = waiters
        waiters = []
        switch outcome {
        case .success(let fetched):
            return .deliver(fetched.jwt, lifetime: fetched.lifetime, to: woken)
        case .failure(let error):
            failures += 1
            retryAt = now.advanced(by: policy.retryDelay(afterFailures: failures, jitter: jitter))
            lastError = error
            return .fail(error, waiters: woken)
        }
    }

    /// Fleet Engine rejected `jwt` (401): whether it was the cached token, which is then dropped (rule 6).
    public mutating func invalidate(_ jwt: String) -> Bool {
        guard token?.jwt == jwt else { return false }
        token = nil
        rejected = Array((rejected + [jwt]).suffix(4))
        if case .inFlight(let id, _) = fetch { fetch = .inFlight(id, predatesInvalidation: true) }
        // A rejection is new information: the next caller fetches at once, whatever the backoff.
        retryAt = nil
        return true
    }

    /// Forgets the token and the fetch in flight (whose result will be ignored); returns the waiters, which the
    /// provider fails with `cancelled`.
    public mutating func reset() -> [ID] {
        let woken = waiters
        self = Self(policy: policy)
        return woken
    }
}
