import FleetAuthClient
import FleetAuthTesting
import Testing

/// The token cache's rules (``TokenCacheState``), one test per rule, with times and outcomes fed in by hand: no
/// clock, no fetcher, no tasks.
@Suite("TokenCacheState: the provider's decisions")
struct TokenCacheStateTests {
    typealias State = TokenCacheState<ManualClock.Instant>
    typealias Outcome = Result<(jwt: String, lifetime: Duration), FleetTokenError>

    static func at(_ seconds: Int64) -> ManualClock.Instant { ManualClock.Instant(offset: .seconds(seconds)) }
    static func token(_ jwt: String, lifetime: Int64 = 3600) -> Outcome { .success((jwt, .seconds(lifetime))) }
    static let unavailable = FleetTokenError(.endpointUnavailable, "503", httpStatus: 503)

    /// The state under test, in a box so that `#expect` can call its mutating methods.
    final class Machine {
        var state = State(policy: TokenCachePolicy())

        func request(waiter: UInt64, at now: ManualClock.Instant, isCancelled: Bool, newFetch: UInt64)
            -> State.RequestAction
        { state.request(waiter: waiter, at: now, isCancelled: isCancelled, newFetch: newFetch) }
        func fetchFinished(
            _ id: UInt64,
            startedAt: ManualClock.Instant,
            result: Outcome,
            at now: ManualClock.Instant,
            newFetch: UInt64,
            jitter: Double
        ) -> State.CompletionAction {
            state.fetchFinished(id, startedAt: startedAt, result: result, at: now, newFetch: newFetch, jitter: jitter)
        }
        func cancel(waiter: UInt64) -> Bool { state.cancel(waiter: waiter) }
        func invalidate(_ jwt: String) -> Bool { state.invalidate(jwt) }
        func reset() -> [UInt64] { state.reset() }
        func freshToken(at now: ManualClock.Instant) -> String? { state.freshToken(at: now) }
        var isFetching: Bool { state.isFetching }
        var waiting: [UInt64] { state.waiting }
    }

    /// A state holding token `jwt`, fetched at time 0 with a one-hour lifetime.
    static func holding(_ jwt: String = "A", lifetime: Int64 = 3600) -> Machine {
        let state = Machine()
        _ = state.request(waiter: 1, at: at(0), isCancelled: false, newFetch: 2)
        _ = state.fetchFinished(
            2,
            startedAt: at(0),
            result: token(jwt, lifetime: lifetime),
            at: at(0),
            newFetch: 3,
            jitter: 1
        )
        return state
    }

    @Test("3 · empty: the first caller starts the fetch, later callers join it, and all get its token")
    func emptyCoalesces() {
        let state = Machine()
        #expect(state.freshToken(at: Self.at(0)) == nil)
        #expect(state.request(waiter: 1, at: Self.at(0), isCancelled: false, newFetch: 10) == .wait(startFetch: 10))
        #expect(state.request(waiter: 2, at: Self.at(1), isCancelled: false, newFetch: 11) == .wait(startFetch: nil))
        #expect(state.request(waiter: 3, at: Self.at(2), isCancelled: false, newFetch: 12) == .wait(startFetch: nil))
        #expect(state.isFetching && state.waiting == [1, 2, 3])
        let done = state.fetchFinished(
            10,
            startedAt: Self.at(0),
            result: Self.token("A"),
            at: Self.at(3),
            newFetch: 13,
            jitter: 1
        )
        #expect(done == .deliver("A", lifetime: .seconds(3600), to: [1, 2, 3]))
        #expect(!state.isFetching && state.waiting.isEmpty)
        #expect(state.freshToken(at: Self.at(3)) == "A")
    }

    @Test("1 · fresh: served while at least the refresh margin is left, with no fetch")
    func fresh() {
        let state = Self.holding()
        #expect(state.freshToken(at: Self.at(3000)) == "A")  // exactly the 10-minute margin left
        #expect(state.request(waiter: 5, at: Self.at(3000), isCancelled: false, newFetch: 9) == .serve("A"))
        #expect(!state.isFetching)
        #expect(state.freshToken(at: Self.at(3001)) == nil)
    }

    @Test("2 · stale: served at once while exactly one background fetch replaces it")
    func stale() {
        let state = Self.holding()
        #expect(
            state.request(waiter: 5, at: Self.at(3001), isCancelled: false, newFetch: 9)
                == .serveAndRefresh("A", fetch: 9)
        )
        #expect(state.request(waiter: 6, at: Self.at(3002), isCancelled: false, newFetch: 10) == .serve("A"))
        #expect(state.waiting.isEmpty, "nobody waits for a background refresh")
        #expect(
            state.fetchFinished(
                9,
                startedAt: Self.at(3001),
                result: Self.token("B"),
                at: Self.at(3005),
                newFetch: 11,
                jitter: 1
            )
                == .deliver("B", lifetime: .seconds(3600), to: [])
        )
        #expect(state.freshToken(at: Self.at(3005)) == "B")
    }

    @Test("3 · expiring: at or below the minimum lifetime, callers wait for the new token")
    func expiring() {
        let state = Self.holding()
        #expect(
            state.request(waiter: 5, at: Self.at(3299), isCancelled: false, newFetch: 9)
                == .serveAndRefresh("A", fetch: 9)
        )
        let expired = Self.holding()
        #expect(expired.request(waiter: 5, at: Self.at(3300), isCancelled: false, newFetch: 9) == .wait(startFetch: 9))
        #expect(
            expired.request(waiter: 6, at: Self.at(4000), isCancelled: false, newFetch: 10) == .wait(startFetch: nil)
        )
    }

    @Test("4 · single flight: a cancelled waiter leaves alone; the others still get the token")
    func cancelledWaiter() {
        let state = Machine()
        _ = state.request(waiter: 1, at: Self.at(0), isCancelled: false, newFetch: 10)
        _ = state.request(waiter: 2, at: Self.at(0), isCancelled: false, newFetch: 11)
        _ = state.request(waiter: 3, at: Self.at(0), isCancelled: false, newFetch: 12)
        #expect(state.cancel(waiter: 2))
        #expect(!state.cancel(waiter: 2), "a waiter is cancelled once")
        #expect(state.isFetching, "the fetch goes on")
        #expect(
            state.fetchFinished(
                10,
                startedAt: Self.at(0),
                result: Self.token("A"),
                at: Self.at(1),
                newFetch: 13,
                jitter: 1
            )
                == .deliver("A", lifetime: .seconds(3600), to: [1, 3])
        )
        // A caller already cancelled when it arrives is never made to wait.
        let empty = Machine()
        let refused = empty.request(waiter: 1, at: Self.at(0), isCancelled: true, newFetch: 2)
        guard case .fail(let error) = refused else {
            Issue.record("expected a failure, got \(refused)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(!empty.isFetching)
    }

    @Test("5 · monotonic expiry: the lifetime runs from the fetch's start; a token arriving too short is an error")
    func monotonicExpiry() {
        let state = Machine()
        _ = state.request(waiter: 1, at: Self.at(0), isCancelled: false, newFetch: 2)
        _ = state.fetchFinished(
            2,
            startedAt: Self.at(0),
            result: Self.token("A"),
            at: Self.at(100),
            newFetch: 3,
            jitter: 1
        )
        #expect(state.freshToken(at: Self.at(3000)) == "A")
        #expect(
            state.freshToken(at: Self.at(3001)) == nil,
            "the fetch took 100 s: the margin starts at 3,001, not 3,101"
        )
        let short = Machine()
        _ = short.request(waiter: 1, at: Self.at(0), isCancelled: false, newFetch: 2)
        let answer = short.fetchFinished(
            2,
            startedAt: Self.at(0),
            result: Self.token("A", lifetime: 400),
            at: Self.at(100),
            newFetch: 3,
            jitter: 1
        )
        guard case .fail(let error, let waiters) = answer else {
            Issue.record("expected a failure, got \(answer)")
            return
        }
        #expect(error.code == .lifetimeTooShort && waiters == [1])
        #expect(short.freshToken(at: Self.at(100)) == nil)
        #expect(!short.isFetching, "an error, not a refetch loop")
    }

    @Test("6 · compare-and-invalidate: only the cached token is dropped, once, whatever the number of 401s")
    func invalidate() {
        let state = Self.holding()
        #expect(!state.invalidate("other"))
        #expect(state.freshToken(at: Self.at(10)) == "A")
        #expect(state.invalidate("A"))
        #expect(!state.invalidate("A"), "the second 401 on the same token changes nothing")
        #expect(state.request(waiter: 5, at: Self.at(10), isCancelled: false, newFetch: 9) == .wait(startFetch: 9))
        #expect(state.request(waiter: 6, at: Self.at(10), isCancelled: false, newFetch: 10) == .wait(startFetch: nil))
    }

    @Test("6 · a fetch that began before the 401 and brings the rejected token back is repeated for the same waiters")
    func olderFetchRefetches() {
        let state = Self.holding()
        #expect(
            state.request(waiter: 5, at: Self.at(3100), isCancelled: false, newFetch: 9)
                == .serveAndRefresh("A", fetch: 9)
        )
        #expect(state.invalidate("A"))
        #expect(state.request(waiter: 6, at: Self.at(3101), isCancelled: false, newFetch: 10) == .wait(startFetch: nil))
        #expect(
            state.fetchFinished(
                9,
                startedAt: Self.at(3100),
                result: Self.token("A"),
                at: Self.at(3102),
                newFetch: 11,
                jitter: 1
            )
                == .refetch(11)
        )
        #expect(state.waiting == [6])
        #expect(
            state.fetchFinished(
                11,
                startedAt: Self.at(3102),
                result: Self.token("B"),
                at: Self.at(3103),
                newFetch: 12,
                jitter: 1
            )
                == .deliver("B", lifetime: .seconds(3600), to: [6])
        )
    }

    @Test("6 · a fetch that began after the 401 and still returns the rejected token fails, it does not loop")
    func rejectedTokenReturned() {
        let state = Self.holding()
        #expect(state.invalidate("A"))
        _ = state.request(waiter: 5, at: Self.at(10), isCancelled: false, newFetch: 9)
        let answer = state.fetchFinished(
            9,
            startedAt: Self.at(10),
            result: Self.token("A"),
            at: Self.at(11),
            newFetch: 10,
            jitter: 1
        )
        guard case .fail(let error, let waiters) = answer else {
            Issue.record("expected a failure, got \(answer)")
            return
        }
        #expect(error.code == .rejectedTokenReturned && waiters == [5])
    }

    @Test("7 · backoff: after a failure callers without a token fail at once until the delay has passed")
    func backoff() {
        let state = Machine()
        _ = state.request(waiter: 1, at: Self.at(0), isCancelled: false, newFetch: 2)
        #expect(
            state.fetchFinished(
                2,
                startedAt: Self.at(0),
                result: .failure(Self.unavailable),
                at: Self.at(0),
                newFetch: 3,
                jitter: 1
            )
                == .fail(Self.unavailable, waiters: [1])
        )
        // One failure: a 1 s delay (jitter 1).
        #expect(state.request(waiter: 4, at: Self.at(0), isCancelled: false, newFetch: 5) == .fail(Self.unavailable))
        #expect(state.request(waiter: 6, at: Self.at(1), isCancelled: false, newFetch: 7) == .wait(startFetch: 7))
        _ = state.fetchFinished(
            7,
            startedAt: Self.at(1),
            result: .failure(Self.unavailable),
            at: Self.at(1),
            newFetch: 8,
            jitter: 1
        )
        // Two failures: 2 s.
        #expect(state.request(waiter: 9, at: Self.at(2), isCancelled: false, newFetch: 10) == .fail(Self.unavailable))
        #expect(state.request(waiter: 11, at: Self.at(3), isCancelled: false, newFetch: 12) == .wait(startFetch: 12))
        _ = state.fetchFinished(
            12,
            startedAt: Self.at(3),
            result: Self.token("A"),
            at: Self.at(3),
            newFetch: 13,
            jitter: 1
        )
        #expect(state.freshToken(at: Self.at(3)) == "A", "a success ends the backoff")
    }

    @Test("7 · a still-valid token is served while its refresh backs off; a new 401 ends the backoff")
    func backoffKeepsServing() {
        let state = Self.holding()
        #expect(
            state.request(waiter: 5, at: Self.at(3100), isCancelled: false, newFetch: 9)
                == .serveAndRefresh("A", fetch: 9)
        )
        _ = state.fetchFinished(
            9,
            startedAt: Self.at(3100),
            result: .failure(Self.unavailable),
            at: Self.at(3100),
            newFetch: 10,
            jitter: 1
        )
        #expect(state.request(waiter: 6, at: Self.at(3100), isCancelled: false, newFetch: 11) == .serve("A"))
        #expect(
            state.request(waiter: 7, at: Self.at(3101), isCancelled: false, newFetch: 12)
                == .serveAndRefresh("A", fetch: 12)
        )
        _ = state.fetchFinished(
            12,
            startedAt: Self.at(3101),
            result: .failure(Self.unavailable),
            at: Self.at(3101),
            newFetch: 13,
            jitter: 1
        )
        #expect(state.invalidate("A"))
        #expect(state.request(waiter: 8, at: Self.at(3101), isCancelled: false, newFetch: 14) == .wait(startFetch: 14))
    }

    @Test("reset: waiters are handed back and the fetch in flight is ignored when it ends")
    func reset() {
        let state = Machine()
        _ = state.request(waiter: 1, at: Self.at(0), isCancelled: false, newFetch: 2)
        _ = state.request(waiter: 3, at: Self.at(0), isCancelled: false, newFetch: 4)
        #expect(state.reset() == [1, 3])
        #expect(
            state.fetchFinished(
                2,
                startedAt: Self.at(0),
                result: Self.token("A"),
                at: Self.at(1),
                newFetch: 5,
                jitter: 1
            )
                == .ignore
        )
        #expect(state.freshToken(at: Self.at(1)) == nil)
    }

    @Test("the retry delay doubles from 1 s to a 60 s cap, jittered down to between half and all of it")
    func retryDelay() {
        let policy = TokenCachePolicy()
        let expected: [Int: Int64] = [1: 1, 2: 2, 3: 4, 4: 8, 5: 16, 6: 32, 7: 60, 30: 60, 1000: 60]
        for (failures, seconds) in expected {
            #expect(policy.retryDelay(afterFailures: failures, jitter: 1) == .seconds(seconds))
            #expect(policy.retryDelay(afterFailures: failures, jitter: 0.5) == .seconds(seconds) / 2)
        }
    }
}
