import FleetAuthCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Token server: minting rate limit", .temporaryResources)
struct MintRateLimiterTests {
    /// Whether one more token may be minted `seconds` after `clock`'s start, and if not, the Retry-After.
    static func attempt(
        _ limiter: MintRateLimiter,
        _ clock: ManualClock,
        _ user: String,
        _ resource: String,
        _ seconds: Int = 0
    ) -> Int? {
        clock.advance(to: .init(offset: .seconds(seconds)))
        do {
            try limiter.acquire(username: user, resource: resource)
            return nil
        } catch {
            #expect(error.code == .resourceExhausted)
            return error.retryAfter ?? -1
        }
    }

    @Test(
        "a burst per user and resource, then the rate; 10 times both across a user's resources; full buckets forgotten"
    )
    func buckets() {
        let clock = ManualClock()
        let limiter = MintRateLimiter(policy: .init(perMinute: 6, burst: 10), clock: clock)
        for _ in 0..<10 { #expect(Self.attempt(limiter, clock, "dana", "driver/v1") == nil) }
        #expect(Self.attempt(limiter, clock, "dana", "driver/v1") == 10, "one token every 10 s")
        #expect(Self.attempt(limiter, clock, "dana", "driver/v1", 4) == 6)
        #expect(Self.attempt(limiter, clock, "dana", "driver/v1", 10) == nil)
        #expect(Self.attempt(limiter, clock, "dana", "driver/v1", 10) == 10)
        // Another resource, another user: their own buckets.
        #expect(Self.attempt(limiter, clock, "dana", "driver/v2", 10) == nil)
        #expect(Self.attempt(limiter, clock, "dave", "driver/v1", 10) == nil)
        // Across resources: 100 at once, then 1 a second.
        let spreadClock = ManualClock()
        let spread = MintRateLimiter(policy: .init(perMinute: 6, burst: 10), clock: spreadClock)
        for index in 0..<100 {
            #expect(Self.attempt(spread, spreadClock, "carol", "consumer/t\(index / 10)") == nil)
        }
        #expect(Self.attempt(spread, spreadClock, "carol", "consumer/t99") == 1)
        #expect(Self.attempt(spread, spreadClock, "carol", "consumer/t99", 1) == nil)
        // Off.
        let off = MintRateLimiter(policy: .unlimited, clock: ManualClock())
        for _ in 0..<1000 { #expect(Self.attempt(off, ManualClock(), "x", "server/") == nil) }
        // Buckets that have refilled are dropped (checked every 1,024 requests).
        let forgettingClock = ManualClock()
        let forgetting = MintRateLimiter(clock: forgettingClock)
        for index in 0..<1023 { _ = Self.attempt(forgetting, forgettingClock, "u\(index)", "r") }
        #expect(forgetting.bucketCount == 2046)
        _ = Self.attempt(forgetting, forgettingClock, "late", "r", 3600)
        #expect(forgetting.bucketCount == 2)
    }

    @Test("a step of the time of day changes nothing: refills follow the monotonic clock, Retry-After stays true")
    func wallClockSteps() {
        let clock = ManualClock()
        let limiter = MintRateLimiter(policy: .init(perMinute: 6, burst: 10), clock: clock)
        for _ in 0..<10 { #expect(Self.attempt(limiter, clock, "dana", "driver/v1") == nil) }
        // Ten minutes back: the resource at its limit waits its 10 s, not until the time of day catches up.
        clock.stepDate(by: -600)
        #expect(Self.attempt(limiter, clock, "dana", "driver/v1") == 10)
        #expect(Self.attempt(limiter, clock, "dana", "driver/v1", 10) == nil)
        // An hour forward fills no bucket.
        clock.stepDate(by: 3600)
        #expect(Self.attempt(limiter, clock, "dana", "driver/v1", 10) == 10)
    }

    @Test("over the limit a token request is 429 with Retry-After, signs and audits nothing, and is counted")
    func overTheLimit() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let dana = try await client.login("dana")
            for _ in 0..<10 { #expect(try await client.json(.get, "/token/driver/v1", bearer: dana).0 == .ok) }
            let audited = try await fixture.store.recentEntries(limit: 100).count
            let (status, body, headers) = try await client.json(.get, "/token/driver/v1", bearer: dana)
            #expect(status == .tooManyRequests)
            #expect(headers[.retryAfter] == "10")
            #expect(body["error"]?.objectValue?["status"]?.stringValue == "RESOURCE_EXHAUSTED")
            #expect(try await fixture.store.recentEntries(limit: 100).count == audited, "nothing audited")
            fixture.clock.advance(by: .seconds(10))
            #expect(try await client.json(.get, "/token/driver/v1", bearer: dana).0 == .ok)
            // Operators read the counts; nobody else does.
            #expect(try await client.json(.get, "/v1/admin/metrics", bearer: dana).0 == .forbidden)
            let ops = try await client.login("ops")
            let text = try await client.execute(
                uri: "/v1/admin/metrics",
                method: .get,
                headers: [.authorization: "Bearer \(ops)"]
            ) { String(buffer: $0.body) }
            #expect(text.contains(#"fleetauth_tokens_issued_total{endpoint="driver"} 11"#))
            #expect(
                text.contains(#"fleetauth_token_requests_refused_total{endpoint="driver",reason="rate_limited"} 1"#)
            )
        }
    }
}
