public import FleetAuthCore
import Foundation

/// The token provider done right: one cached token per context, one fetch at a time per context however many
/// callers wait, refresh in the background ahead of expiry, and no token handed out with less than the minimum
/// lifetime left. The contract and the failures of other libraries it avoids are in <doc:TokenProviderContract>.
///
/// - **Fresh** (at least ``TokenCachePolicy/refreshMargin`` left): served from memory.
/// - **Stale** (inside the margin, above ``TokenCachePolicy/minimumLifetime``): served, while one background fetch
///   replaces it.
/// - **Expiring** (at or below the minimum lifetime) or **empty**: callers wait for the fetch in flight, or start
///   one. A token that arrives already at or below the minimum lifetime is a `lifetime_too_short` error, never a
///   refetch loop.
/// - **Failures** back off (jittered, doubling from ``TokenCachePolicy/initialBackoff`` to
///   ``TokenCachePolicy/maximumBackoff``). During the backoff a still-valid token keeps being served; callers
///   without one get the last error at once.
///
/// Expiry runs on the injected monotonic clock: a token expires at *the moment its fetch started* plus its
/// lifetime `exp − iat` (both the server's clock, so device clock skew cannot matter), shortened by the endpoint's
/// stated lifetime if that is less. ``invalidate(_:for:)`` is compare-and-invalidate: many 401s on one token cause
/// one refresh, and a fetch that started before the invalidation cannot answer it with the rejected token.
/// Cancelling a waiting caller never cancels the fetch or the other callers. Tokens live in memory only.
///
/// Every decision is made by a ``TokenCacheState`` per context, a pure state machine tested on its own; this
/// class is the thin shell that holds them under one lock and carries out their actions. A lock and not an actor:
/// the cached path is one lock and one dictionary lookup (under a microsecond, `fleetauth bench client`), where an
/// actor hop would cost more than the whole lookup.
public final class CachingTokenProvider<C: Clock>: FleetTokenProvider, @unchecked Sendable
where C.Duration == Duration {
    /// Margins and backoff.
    public typealias Configuration = TokenCachePolicy

    public let configuration: Configuration
    private let fetcher: any TokenFetcher
    private let clock: C
    private let onEvent: (@Sendable (TokenProviderEvent) -> Void)?
    private let lock = NSLock()
    private var entries: [AuthorizationContext: Entry] = [:]
    /// One context's state machine, boxed: the cached path reads it in place instead of copying it (with its
    /// arrays and strings) out of the dictionary, and every change mutates it in place.
    private final class Entry {
        var state: TokenCacheState<C.Instant>
        init(_ state: TokenCacheState<C.Instant>) { self.state = state }
    }

    /// Continuations of waiting callers, by waiter ID.
    private var continuations: [UInt64: CheckedContinuation<String, any Error>] = [:]
    /// The source of waiter and fetch IDs (never reused).
    private var lastID: UInt64 = 0

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
        // The fast path: one lock, one dictionary lookup.
        let now = clock.now
        if let fresh = lock.withLock({ entries[context]?.state.freshToken(at: now) }) {
            onEvent?(.cacheHit(context))
            return fresh
        }
        let waiter = lock.withLock { nextID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let now = clock.now
                let action = lock.withLock {
                    let entry = entries[context] ?? Entry(TokenCacheState(policy: configuration))
                    entries[context] = entry
                    let action = entry.state.request(
                        waiter: waiter,
                        at: now,
                        isCancelled: Task.isCancelled,
                        newFetch: nextID()
                    )
                    if case .wait = action { continuations[waiter] = continuation }
                    return action
                }
                switch action {
                case .serve(let jwt):
                    onEvent?(.cacheHit(context))
                    continuation.resume(returning: jwt)
                case .serveAndRefresh(let jwt, let fetch):
                    onEvent?(.cacheHit(context))
                    continuation.resume(returning: jwt)
                    startFetch(fetch, for: context, background: true)
                case .wait(let fetch?):
                    startFetch(fetch, for: context, background: false)
                case .wait(nil):
                    onEvent?(.coalesced(context))
                case .fail(let error):
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let continuation = lock.withLock {
                entries[context]?.state.cancel(waiter: waiter) == true ? continuations.removeValue(forKey: waiter) : nil
            }
            continuation?.resume(throwing: FleetTokenError(.cancelled, "The caller was cancelled."))
        }
    }

    /// Called with the lock held.
    private func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// Runs fetch `id` in a task of its own, which no caller owns: cancelling a caller never cancels it.
    private func startFetch(_ id: UInt64, for context: AuthorizationContext, background: Bool) {
        onEvent?(.fetchStarted(context, background: background))
        let started = clock.now
        let fetcher = self.fetcher
        Task {
            let result: Result<(jwt: String, lifetime: Duration), FleetTokenError>
            do {
                let fetched = try await fetcher.fetchToken(for: context)
                result = Self.lifetime(of: fetched).map { (fetched.jwt, $0) }
            } catch let error as FleetTokenError {
                result = .failure(error)
            } catch {
                result = .failure(FleetTokenError(.endpointUnavailable, "The token fetch failed: \(error)"))
            }
            self.finish(id, for: context, startedAt: started, result: result)
        }
    }

    private func finish(
        _ id: UInt64,
        for context: AuthorizationContext,
        startedAt: C.Instant,
        result: Result<(jwt: String, lifetime: Duration), FleetTokenError>
    ) {
        let now = clock.now
        let (action, woken) = lock.withLock {
            () -> (TokenCacheState<C.Instant>.CompletionAction, [UInt64: CheckedContinuation<String, any Error>]) in
            guard let entry = entries[context] else { return (.ignore, [:]) }
            let action = entry.state.fetchFinished(
                id,
                startedAt: startedAt,
                result: result,
                at: now,
                newFetch: nextID(),
                jitter: Double.random(in: 0.5...1)
            )
            var woken: [UInt64: CheckedContinuation<String, any Error>] = [:]
            switch action {
            case .deliver(_, _, let waiters), .fail(_, let waiters):
                for waiter in waiters { woken[waiter] = continuations.removeValue(forKey: waiter) }
            case .ignore, .refetch:
                break
            }
            return (action, woken)
        }
        switch action {
        case .ignore:
            break
        case .refetch(let fetch):
            startFetch(fetch, for: context, background: false)
        case .deliver(let jwt, let lifetime, _):
            onEvent?(.fetchSucceeded(context, lifetime: lifetime))
            for continuation in woken.values { continuation.resume(returning: jwt) }
        case .fail(let error, _):
            onEvent?(.fetchFailed(context, error))
            for continuation in woken.values { continuation.resume(throwing: error) }
        }
    }

    /// The delay before retrying after `failures` consecutive failures, jittered: see
    /// ``TokenCachePolicy/retryDelay(afterFailures:jitter:)``.
    public func backoff(afterFailures failures: Int) -> Duration {
        configuration.retryDelay(afterFailures: failures, jitter: Double.random(in: 0.5...1))
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
                FleetTokenError(.malformedToken, "The JWT has no iat and the endpoint stated no lifetime.")
            )
        }
        return .success(lifetime)
    }

    public func invalidate(_ token: String, for context: AuthorizationContext) {
        let dropped = lock.withLock { entries[context]?.state.invalidate(token) ?? false }
        if dropped { onEvent?(.invalidated(context)) }
    }

    /// Forgets every token (sign-out, or the app's context changed); callers still waiting get `cancelled`.
    public func removeAll() {
        let woken = lock.withLock {
            for entry in entries.values { _ = entry.state.reset() }
            entries = [:]
            defer { continuations = [:] }
            return Array(continuations.values)
        }
        for continuation in woken {
            continuation.resume(throwing: FleetTokenError(.cancelled, "The provider was reset."))
        }
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
