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
    static let t0 = Date(epochSeconds: 1_800_000_000)

    /// Whether one more token may be minted, and if not, the Retry-After.
    static func attempt(_ limiter: MintRateLimiter, _ user: String, _ resource: String, _ now: Date) -> Int? {
        do {
            try limiter.acquire(username: user, resource: resource, now: now)
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
        let limiter = MintRateLimiter(policy: .init(perMinute: 6, burst: 10))
        for _ in 0..<10 { #expect(Self.attempt(limiter, "dana", "driver/v1", Self.t0) == nil) }
        #expect(Self.attempt(limiter, "dana", "driver/v1", Self.t0) == 10, "one token every 10 s")
        #expect(Self.attempt(limiter, "dana", "driver/v1", Self.t0 + 4) == 6)
        #expect(Self.attempt(limiter, "dana", "driver/v1", Self.t0 + 10) == nil)
        #expect(Self.attempt(limiter, "dana", "driver/v1", Self.t0 + 10) == 10)
        // Another resource, another user: their own buckets.
        #expect(Self.attempt(limiter, "dana", "driver/v2", Self.t0 + 10) == nil)
        #expect(Self.attempt(limiter, "dave", "driver/v1", Self.t0 + 10) == nil)
        // Across resources: 100 at once, then 1 a second.
        let spread = MintRateLimiter(policy: .init(perMinute: 6, burst: 10))
        for index in 0..<100 { #expect(Self.attempt(spread, "carol", "consumer/t\(index / 10)", Self.t0) == nil) }
        #expect(Self.attempt(spread, "carol", "consumer/t99", Self.t0) == 1)
        #expect(Self.attempt(spread, "carol", "consumer/t99", Self.t0 + 1) == nil)
        // Off.
        let off = MintRateLimiter(policy: .unlimited)
        for _ in 0..<1000 { #expect(Self.attempt(off, "x", "server/", Self.t0) == nil) }
        // Buckets that have refilled are dropped (checked every 1,024 requests).
        let forgetting = MintRateLimiter()
        for index in 0..<1023 { _ = Self.attempt(forgetting, "u\(index)", "r", Self.t0) }
        #expect(forgetting.bucketCount == 2046)
        _ = Self.attempt(forgetting, "late", "r", Self.t0 + 3600)
        #expect(forgetting.bucketCount == 2)
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
