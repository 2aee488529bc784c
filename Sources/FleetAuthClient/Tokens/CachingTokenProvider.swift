public import FleetAuthCore
import Foundation

/// The token provider done right (`reference/token-provider.md`): one cached token per context, one fetch at a
/// time per context however many callers wait, refresh in the background ahead of expiry, and no token handed out
/// with less than the minimum lifetime left.
///
/// - **Fresh** (more than ``Configuration/refreshMargin`` left): served from memory.
/// - **Stale** (inside the margin, above ``Configuration/minimumLifetime``): served, while one background fetch
///   replaces it.
/// - **Expiring** (at or below the minimum lifetime) or **empty**: callers wait for the fetch in flight, or start
///   one. A token that arrives already at or below the minimum lifetime is a ``FleetTokenError/Code/lifetimeTooShort``
///   error, never a refetch loop.
/// - **Failures** back off (jittered, doubling from ``Configuration/initialBackoff`` to
///   ``Configuration/maximumBackoff``). During the backoff a still-valid token keeps being served; callers
///   without one get the last error at once.
///
/// Expiry runs on the injected monotonic clock: a token expires at *the moment its fetch started* plus its
/// lifetime `exp − iat` (both the server's clock, so device clock skew cannot matter), shortened by the endpoint's
/// stated lifetime if that is less. ``invalidate(_:for:)`` is compare-and-invalidate: many 401s on one token cause
/// one refresh, and a fetch that started before the invalidation cannot answer it with the rejected token.
/// Cancelling a waiting caller never cancels the fetch or the other callers. Tokens live in memory only.
public final class CachingTokenProvider<C: Clock>: FleetTokenProvider, @unchecked Sendable
where C.Duration == Duration {
    public struct Configuration: Sendable, Hashable {
        /// Start a background refresh when less than this is left. Default 10 minutes (the Android samples').
        public var refreshMargin: Duration = .seconds(600)
        /// Never hand out a token with this or less left. Default 5 minutes (the SDK contract).
        public var minimumLifetime: Duration = .seconds(300)
        /// The first retry delay after a failed fetch.
        public var initialBackoff: Duration = .seconds(1)
        /// The longest retry delay.
        public var maximumBackoff: Duration = .seconds(60)

        public init() {}
    }

    private struct Entry {
        var jwt: String?
        var expiresAt: C.Instant?
        /// The fetch in flight, if any, and whether it started before an invalidation.
        var fetchID: UInt64?
        var fetchPredatesInvalidation = false
        var waiters: [UInt64: CheckedContinuation<String, any Error>] = [:]
        /// Tokens Fleet Engine rejected (the last few).
        var rejected: [String] = []
        var failures = 0
        var retryAt: C.Instant?
        var lastError: FleetTokenError?
    }

    public let configuration: Configuration
    private let fetcher: any TokenFetcher
    private let clock: C
    private let onEvent: (@Sendable (TokenProviderEvent) -> Void)?
    private let lock = NSLock()
    private var entries: [AuthorizationContext: Entry] = [:]
    private var nextID: UInt64 = 0

    /// - Parameters:
    ///   - fetcher: gets new tokens from the app's backend.
    ///   - configuration: margins and backoff.
    ///   - clock: the monotonic clock (`ContinuousClock()` in apps; a manual clock in tests).
    ///   - onEvent: called with every ``TokenProviderEvent``, on any thread.
    public init(
        fetcher: any TokenFetcher,
        configuration: Configuration = Configuration(),
        clock: C,
        onEvent: (@Sendable (TokenProviderEvent) -> Void)? = nil
    ) {
        self.fetcher = fetcher
        self.configuration = configuration
        self.clock = clock
        self.onEvent = onEvent
    }

    public func token(for context: AuthorizationContext) async throws -> String {
        // Fast path: a fresh token, one lock and one dictionary lookup.
        let now = clock.now
        let fresh: String? = lock.withLock {
            guard let entry = entries[context], let jwt = entry.jwt, let expiresAt = entry.expiresAt,
                now.duration(to: expiresAt) > configuration.refreshMargin
            else { return nil }
            return jwt
        }
        if let fresh {
            onEvent?(.cacheHit(context))
            return fresh
        }
        return try await slowToken(for: context)
    }

    private enum Step {
        case serve(String)
        case fail(FleetTokenError)
        case wait
    }

    private func slowToken(for context: AuthorizationContext) async throws -> String {
        let waiterID = lock.withLock { () -> UInt64 in
            nextID += 1
            return nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                var fetchToStart: (UInt64, Bool)?
                var joined = false
                let now = clock.now
                let step: Step = lock.withLock {
                    var entry = entries[context] ?? Entry()
                    defer { entries[context] = entry }
                    if let jwt = entry.jwt, let expiresAt = entry.expiresAt,
                        now.duration(to: expiresAt) > configuration.minimumLifetime
                    {
                        // Usable: serve it. When stale, refresh in the background unless backing off (a caller
                        // that missed the fast path while the first fetch ran finds a fresh token here).
                        if now.duration(to: expiresAt) <= configuration.refreshMargin, entry.fetchID == nil,
                            entry.retryAt.map({ now >= $0 }) ?? true
                        {
                            nextID += 1
                            entry.fetchID = nextID
                            fetchToStart = (nextID, true)
                        }
                        return .serve(jwt)
                    }
                    if Task.isCancelled { return .fail(FleetTokenError(.cancelled, "The caller was cancelled.")) }
                    if entry.fetchID == nil {
                        if let retryAt = entry.retryAt, now < retryAt, let error = entry.lastError {
                            return .fail(error)
                        }
                        nextID += 1
                        entry.fetchID = nextID
                        fetchToStart = (nextID, false)
                    } else {
                        joined = true
                    }
                    entry.waiters[waiterID] = continuation
                    return .wait
                }
                switch step {
                case .serve(let jwt):
                    onEvent?(.cacheHit(context))
                    continuation.resume(returning: jwt)
                case .fail(let error):
                    continuation.resume(throwing: error)
                case .wait:
                    if joined { onEvent?(.coalesced(context)) }
                }
                if let (id, background) = fetchToStart { startFetch(context, id: id, background: background) }
            }
        } onCancel: {
            let continuation = lock.withLock { entries[context]?.waiters.removeValue(forKey: waiterID) }
            continuation?.resume(throwing: FleetTokenError(.cancelled, "The caller was cancelled."))
        }
    }

    private func startFetch(_ context: AuthorizationContext, id: UInt64, background: Bool) {
        onEvent?(.fetchStarted(context, background: background))
        let started = clock.now
        let fetcher = self.fetcher
        Task {
            let result: Result<FetchedToken, any Error>
            do {
                result = .success(try await fetcher.fetchToken(for: context))
            } catch {
                result = .failure(error)
            }
            self.finish(context, id: id, started: started, result: result)
        }
    }

    /// Settles the fetch `id`: caches its token and wakes the waiters, or records the failure and backs off.
    private func finish(
        _ context: AuthorizationContext, id: UInt64, started: C.Instant, result: Result<FetchedToken, any Error>
    ) {
        let now = clock.now
        var outcome: Result<(jwt: String, lifetime: Duration), FleetTokenError>
        switch result {
        case .success(let fetched):
            outcome = Self.lifetime(of: fetched).map { (fetched.jwt, $0) }
        case .failure(let error as FleetTokenError):
            outcome = .failure(error)
        case .failure(let error):
            outcome = .failure(FleetTokenError(.endpointUnavailable, "The token fetch failed: \(error)"))
        }
        var restartID: UInt64?
        let waiters: [CheckedContinuation<String, any Error>] = lock.withLock {
            guard var entry = entries[context], entry.fetchID == id else { return [] }
            defer { entries[context] = entry }
            entry.fetchID = nil
            if case .success(let token) = outcome, entry.rejected.contains(token.jwt) {
                if entry.fetchPredatesInvalidation {
                    // An older fetch brought back the rejected token: fetch again for the same waiters.
                    entry.fetchPredatesInvalidation = false
                    nextID += 1
                    entry.fetchID = nextID
                    restartID = nextID
                    return []
                }
                outcome = .failure(
                    FleetTokenError(
                        .rejectedTokenReturned, "The token endpoint answered with the token Fleet Engine rejected."))
            }
            entry.fetchPredatesInvalidation = false
            if case .success(let token) = outcome {
                let expiresAt = started.advanced(by: token.lifetime)
                if now.duration(to: expiresAt) <= configuration.minimumLifetime {
                    outcome = .failure(
                        FleetTokenError(
                            .lifetimeTooShort,
                            "The new token has \(now.duration(to: expiresAt)) left, not more than the minimum \(configuration.minimumLifetime)."
                        ))
                } else {
                    entry.jwt = token.jwt
                    entry.expiresAt = expiresAt
                    entry.failures = 0
                    entry.retryAt = nil
                    entry.lastError = nil
                }
            }
            if case .failure(let error) = outcome {
                entry.failures += 1
                entry.retryAt = now.advanced(by: backoff(afterFailures: entry.failures))
                entry.lastError = error
            }
            let waiting = Array(entry.waiters.values)
            entry.waiters = [:]
            return waiting
        }
        if let restartID {
            startFetch(context, id: restartID, background: false)
            return
        }
        switch outcome {
        case .success(let token):
            onEvent?(.fetchSucceeded(context, lifetime: token.lifetime))
            for waiter in waiters { waiter.resume(returning: token.jwt) }
        case .failure(let error):
            onEvent?(.fetchFailed(context, error))
            for waiter in waiters { waiter.resume(throwing: error) }
        }
    }

    /// The delay before retrying after `failures` consecutive failures: doubling from the initial backoff, at
    /// most the maximum, then jittered down to between half and all of it.
    public func backoff(afterFailures failures: Int) -> Duration {
        let doubled = configuration.initialBackoff * (1 << min(max(failures - 1, 0), 20))
        let capped = min(doubled, configuration.maximumBackoff)
        return capped * Double.random(in: 0.5...1.0)
    }

    /// The token's lifetime: `exp − iat` from the JWT, shortened by the stated lifetime.
    static func lifetime(of fetched: FetchedToken) -> Result<Duration, FleetTokenError> {
        guard let jws = try? CompactJWS(fetched.jwt), let payload = try? StrictJSONParser().parseObject(jws.payload),
            case .integer(let expiry)? = payload["exp"]
        else {
            return .failure(FleetTokenError(.malformedToken, "The endpoint's answer is not a JWT with an integer exp."))
        }
        var lifetime: Duration?
        if case .integer(let issuedAt)? = payload["iat"] {
            guard expiry > issuedAt else {
                return .failure(FleetTokenError(.malformedToken, "The JWT's exp is not after its iat."))
            }
            lifetime = .seconds(expiry - issuedAt)
        }
        if let stated = fetched.statedLifetime { lifetime = min(lifetime ?? stated, stated) }
        guard let lifetime else {
            return .failure(
                FleetTokenError(.malformedToken, "The JWT has no iat and the endpoint stated no lifetime."))
        }
        return .success(lifetime)
    }

    public func invalidate(_ token: String, for context: AuthorizationContext) {
        let dropped: Bool = lock.withLock {
            guard var entry = entries[context], entry.jwt == token else { return false }
            entry.jwt = nil
            entry.expiresAt = nil
            entry.rejected = Array((entry.rejected + [token]).suffix(4))
            if entry.fetchID != nil { entry.fetchPredatesInvalidation = true }
            // A rejection is new information: the next call fetches at once, whatever the backoff.
            entry.retryAt = nil
            entries[context] = entry
            return true
        }
        if dropped { onEvent?(.invalidated(context)) }
    }

    /// Forgets every token (sign-out, or the app's context changed); callers still waiting get `cancelled`.
    public func removeAll() {
        let waiters = lock.withLock {
            let waiting = entries.values.flatMap { $0.waiters.values }
            entries = [:]
            return waiting
        }
        for waiter in waiters { waiter.resume(throwing: FleetTokenError(.cancelled, "The provider was reset.")) }
    }

    /// The completion-handler entry point, shaped like the iOS SDKs' `fetchToken(with:completion:)`: `completion`
    /// is called exactly once, always asynchronously (never on the caller's stack), from any thread.
    public func fetchToken(
        with context: AuthorizationContext?,
        completion: @escaping @Sendable (String?, (any Error)?) -> Void
    ) {
        Task {
            guard let context else {
                completion(nil, FleetTokenError(.missingContext, "No authorization context was given."))
                return
            }
            do {
                completion(try await token(for: context), nil)
            } catch {
                completion(nil, error)
            }
        }
    }
}

extension CachingTokenProvider where C == ContinuousClock {
    /// A provider on the system's monotonic clock.
    public convenience init(
        fetcher: any TokenFetcher,
        configuration: Configuration = Configuration(),
        onEvent: (@Sendable (TokenProviderEvent) -> Void)? = nil
    ) {
        self.init(fetcher: fetcher, configuration: configuration, clock: ContinuousClock(), onEvent: onEvent)
    }
}
