import FleetAuthClient
import FleetAuthCore
import FleetAuthTesting
import Foundation
import Testing

@Suite("CachingTokenProvider")
struct CachingTokenProviderTests {
    let clock = ManualClock()
    let fetcher = CountingTokenFetcher(lifetime: 3600)
    let events = EventRecorder<TokenProviderEvent>()
    let context = AuthorizationContext.vehicle("v1")

    func provider() -> CachingTokenProvider<ManualClock> {
        let events = self.events
        return CachingTokenProvider(fetcher: fetcher, clock: clock) { events.record($0) }
    }

    static func serial(_ jwt: String) -> String? {
        guard let jws = try? CompactJWS(jwt), let payload = try? StrictJSONParser().parseObject(jws.payload) else {
            return nil
        }
        return payload["jti"]?.stringValue
    }

    @Test("1,000 concurrent callers cause one fetch and all get its token")
    func singleFlight() async throws {
        let provider = provider()
        let context = self.context
        fetcher.hold()
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<1000 { group.addTask { try await provider.token(for: context) } }
            await fetcher.waitUntil(held: 1)
            fetcher.release()
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(fetcher.fetchCount == 1)
        #expect(try await provider.token(for: context) == tokens.first)
        #expect(fetcher.fetchCount == 1)
    }

    @Test("callers arriving while the first fetch completes never start a second one")
    func noRefetchWhileFresh() async throws {
        let provider = provider()
        for round in 0..<20 {
            let context = AuthorizationContext.vehicle("v\(round)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<200 { group.addTask { _ = try await provider.token(for: context) } }
                try await group.waitForAll()
            }
        }
        #expect(fetcher.fetchCount == 20)
    }

    @Test("cancelling one waiter leaves the fetch and the other waiters alone")
    func cancelledWaiter() async throws {
        let provider = provider()
        let context = self.context
        fetcher.hold()
        let first = Task { try await provider.token(for: context) }
        let second = Task { try await provider.token(for: context) }
        let third = Task { try await provider.token(for: context) }
        await fetcher.waitUntil(held: 1)
        await events.wait { $0.filter { $0 == .coalesced(context) }.count == 2 }
        second.cancel()
        let cancelled = await second.result
        expectCode(FleetTokenError(.cancelled, "")) { try cancelled.get() }
        #expect(fetcher.fetchCount == 1)
        fetcher.release()
        let a = try await first.value
        let c = try await third.value
        #expect(a == c)
        #expect(fetcher.fetchCount == 1)
    }

    @Test("a storm of 401s on one token causes one refresh; other tokens are ignored")
    func invalidationStorm() async throws {
        let provider = provider()
        let context = self.context
        let rejected = try await provider.token(for: context)
        let fresh = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    provider.invalidate(rejected, for: context)
                    return try await provider.token(for: context)
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(fetcher.fetchCount == 2)
        #expect(fresh.count == 1 && fresh.first != rejected)
        provider.invalidate("some-other-token", for: context)
        #expect(try await provider.token(for: context) == fresh.first)
        #expect(events.events.filter { $0 == .invalidated(context) }.count == 1)
    }

    @Test("a fetch that started before a 401 cannot answer it with the rejected token")
    func olderFetchCannotAnswerRejection() async throws {
        let provider = provider()
        let context = self.context
        let rejected = try await provider.token(for: context)
        // A background refresh is in flight (inside the margin) and will return the rejected token again.
        clock.advance(by: .seconds(3600 - 599))
        fetcher.hold()
        fetcher.enqueue(.jwt(rejected))
        #expect(try await provider.token(for: context) == rejected)
        await fetcher.waitUntil(held: 1)
        provider.invalidate(rejected, for: context)
        let waiter = Task { try await provider.token(for: context) }
        fetcher.release()
        let fresh = try await waiter.value
        #expect(fresh != rejected)
        #expect(fetcher.fetchCount == 3)
    }

    @Test("inside the refresh margin the current token is served at once while one background fetch runs")
    func backgroundRefresh() async throws {
        let provider = provider()
        let context = self.context
        let first = try await provider.token(for: context)
        clock.advance(by: .seconds(3600 - 600))
        #expect(try await provider.token(for: context) == first)  // exactly at the margin: still fresh
        clock.advance(by: .seconds(1))
        fetcher.hold()
        for _ in 0..<10 { #expect(try await provider.token(for: context) == first) }
        await fetcher.waitUntil(held: 1)
        #expect(fetcher.fetchCount == 2)
        #expect(events.events.contains(.fetchStarted(context, background: true)))
        fetcher.release()
        await events.wait { $0.filter { if case .fetchSucceeded = $0 { true } else { false } }.count == 2 }
        let second = try await provider.token(for: context)
        #expect(second != first)
        #expect(fetcher.fetchCount == 2)
    }

    @Test("at or below the minimum lifetime callers wait for the new token")
    func blocksBelowMinimum() async throws {
        let provider = provider()
        let context = self.context
        let first = try await provider.token(for: context)
        clock.advance(by: .seconds(3600 - 300))
        fetcher.hold()
        let waiter = Task { try await provider.token(for: context) }
        await fetcher.waitUntil(held: 1)
        fetcher.release()
        let second = try await waiter.value
        #expect(second != first)
    }

    @Test("expiry runs from when the fetch started, on the monotonic clock, whatever the JWT's absolute times say")
    func monotonicExpiry() async throws {
        // Tokens issued "in 2027" by the server's clock: the device clock is irrelevant.
        fetcher.issuedAt = 1_900_000_000
        let provider = provider()
        let context = self.context
        fetcher.hold()
        let waiter = Task { try await provider.token(for: context) }
        await fetcher.waitUntil(held: 1)
        clock.advance(by: .seconds(100))  // the fetch took 100 s
        fetcher.release()
        let first = try await waiter.value
        // Expires at fetch start + 3600: the refresh margin begins 2,999 s after it arrived, not 3,000.
        clock.advance(by: .seconds(3600 - 600 - 100))
        #expect(try await provider.token(for: context) == first)
        #expect(fetcher.fetchCount == 1)
        clock.advance(by: .seconds(1))
        _ = try await provider.token(for: context)
        await fetcher.waitUntil(fetches: 2)
        #expect(fetcher.fetchCount == 2)
    }

    @Test("a stated lifetime shorter than the JWT's wins; a token arriving near expiry is an error, not a loop")
    func lifetimes() async throws {
        let provider = provider()
        let context = self.context
        fetcher.enqueue(.tokenWithStatedLifetime(jwtLifetime: 3600, stated: .seconds(900)))
        _ = try await provider.token(for: context)
        clock.advance(by: .seconds(301))  // 599 s left: inside the 10-minute margin
        fetcher.enqueue(.token(lifetime: 200))
        _ = try await provider.token(for: context)  // served; background fetch returns a too-short token
        await events.wait { $0.contains { if case .fetchFailed = $0 { true } else { false } } }
        guard
            case .fetchFailed(_, let error)? = events.events.last(where: {
                if case .fetchFailed = $0 { true } else { false }
            })
        else {
            Issue.record("no failure event")
            return
        }
        #expect(error.code == .lifetimeTooShort && !error.isTransient)
        #expect(fetcher.fetchCount == 2)

        let fresh = CachingTokenProvider(fetcher: fetcher, clock: clock)
        fetcher.enqueue(.token(lifetime: 300))
        await expectCode(FleetTokenError(.lifetimeTooShort, "")) { try await fresh.token(for: .trip("t1")) }
        #expect(fetcher.fetchCount == 3)
        fetcher.enqueue(.jwt("not-a-jwt"))
        clock.advance(by: .seconds(120))
        await expectCode(FleetTokenError(.malformedToken, "")) { try await fresh.token(for: .trip("t2")) }
    }

    @Test("transient failures back off within bounds; a valid token keeps being served meanwhile")
    func backoff() async throws {
        let provider = provider()
        for failures in 1...12 {
            let base = min(Duration.seconds(1) * (1 << (failures - 1)), .seconds(60))
            for _ in 0..<20 {
                let delay = provider.backoff(afterFailures: failures)
                #expect(delay >= base * 0.5 && delay <= base, "failure \(failures): \(delay)")
            }
        }
        let context = self.context
        let unavailable = FleetTokenError(.endpointUnavailable, "503", httpStatus: 503)
        fetcher.enqueue(.failure(unavailable))
        let error = await #expect(throws: FleetTokenError.self) { try await provider.token(for: context) }
        #expect(error?.isTransient == true)
        // Within the backoff, the last error comes back at once without a fetch.
        await #expect(throws: FleetTokenError.self) { try await provider.token(for: context) }
        #expect(fetcher.fetchCount == 1)
        clock.advance(by: .seconds(1))
        let token = try await provider.token(for: context)
        #expect(fetcher.fetchCount == 2)
        // Inside the margin, a failing background refresh keeps serving the current token.
        clock.advance(by: .seconds(3600 - 500))
        fetcher.enqueue(.failure(unavailable), .failure(unavailable))
        #expect(try await provider.token(for: context) == token)
        await fetcher.waitUntil(fetches: 3)
        await events.wait { $0.filter { if case .fetchFailed = $0 { true } else { false } }.count == 2 }
        #expect(try await provider.token(for: context) == token)
        #expect(fetcher.fetchCount == 3)
    }

    @Test("the completion handler is called exactly once, asynchronously, also for a missing context")
    func completionHandler() async throws {
        let provider = provider()
        let calls = EventCounter()
        let returned = EventCounter()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            provider.fetchToken(with: nil) { token, error in
                #expect(returned.value == 1, "called before fetchToken returned")
                #expect(token == nil && (error as? FleetTokenError)?.code == .missingContext)
                calls.increment()
                done.resume()
            }
            returned.increment()
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            provider.fetchToken(with: context) { token, error in
                #expect(token != nil && error == nil)
                calls.increment()
                done.resume()
            }
        }
        #expect(calls.value == 2)
    }
}

final class EventCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
