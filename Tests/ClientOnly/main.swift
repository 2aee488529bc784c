// An app with FleetAuthClient alone: a token provider in front of a fetcher that counts its calls.
import FleetAuthClient
import FleetAuthCore
import Foundation

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

/// Hands out a fresh-looking JWT (an hour to live) and counts how often it is asked.
struct CountingFetcher: TokenFetcher {
    let fetches: Counter

    func fetchToken(for context: AuthorizationContext) async throws -> FetchedToken {
        fetches.increment()
        let now = Int(Date().timeIntervalSince1970)
        let header = #"{"alg":"RS256","typ":"JWT","kid":"app"}"#
        let claims =
            #"{"iss":"app","sub":"app","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"exp":\#(now + 3600),"authorization":{"vehicleid":"vehicle-1"}}"#
        let jwt = [Base64URL.encode(Array(header.utf8)), Base64URL.encode(Array(claims.utf8)), "c2lnbmF0dXJl"]
            .joined(separator: ".")
        return FetchedToken(jwt: jwt, statedLifetime: .seconds(3600))
    }
}

let fetches = Counter()
let provider = CachingTokenProvider(fetcher: CountingFetcher(fetches: fetches), clock: ContinuousClock())
let first = try await provider.token(for: .vehicle("vehicle-1"))
let second = try await provider.token(for: .vehicle("vehicle-1"))
guard first == second, fetches.count == 1 else {
    print("FleetAuthClient alone: expected one fetch for two calls, got \(fetches.count)")
    exit(1)
}
print("FleetAuthClient alone: two tokens asked, one fetched, no other package resolved")
