import Testing

@testable import FleetAuthIAM

@Suite("AccessTokenCache: the access-token rules")
struct AccessTokenCacheTests {
    let token = AccessTokenCache.Token(value: "t1", expiresAt: 10_000)

    @Test("rule 1: a token is used until 5 minutes before it expires, then fetched again")
    func margin() {
        var cache = AccessTokenCache()
        #expect(cache.request(now: 0) == .startFetch)
        cache.fetched(token)
        #expect(cache.request(now: 9_699) == .use("t1"))
        #expect(cache.request(now: 9_700) == .startFetch)
    }

    @Test("rule 2: callers arriving during a fetch wait for it")
    func singleFlight() {
        var cache = AccessTokenCache()
        #expect(cache.request(now: 0) == .startFetch)
        #expect(cache.request(now: 0) == .wait)
        #expect(cache.request(now: 1) == .wait)
        cache.fetched(token)
        #expect(cache.request(now: 2) == .use("t1"))
    }

    @Test("rule 3: a failed fetch lets the next caller start a new one")
    func failure() {
        var cache = AccessTokenCache()
        #expect(cache.request(now: 0) == .startFetch)
        cache.failed()
        #expect(cache.request(now: 0) == .startFetch)
    }

    @Test("rule 4: a refused token is dropped only if it is still the cached one")
    func refused() {
        var cache = AccessTokenCache()
        _ = cache.request(now: 0)
        cache.fetched(token)
        cache.refused("older")
        #expect(cache.request(now: 1) == .use("t1"))
        cache.refused("t1")
        #expect(cache.request(now: 1) == .startFetch)
    }
}
