import FleetAuthClient
import FleetAuthCore
import FleetAuthTesting
import Foundation
import Testing

@Suite("TokenEndpointFetcher")
struct TokenEndpointFetcherTests {
    static let iat: Int64 = 1_800_000_000
    static let jwt = CountingTokenFetcher.jwt(context: .vehicle("v1"), issuedAt: iat, lifetime: 3600, serial: 1)

    static func read(_ json: String, _ expiry: TokenEndpointFetcher.Expiry = .automatic) throws -> FetchedToken {
        try TokenEndpointFetcher.read(Array(json.utf8), expiry: expiry)
    }

    @Test(
        "every backend's convention is detected from the JWT itself, and none is confused with another",
        arguments: [
            // ODRD sample backend and FleetAuth: absolute epoch milliseconds.
            (#"{"jwt":"JWT","creationTimestamp":1800000000000,"expirationTimestamp":1800003600000}"#, 3600.0),
            // LMFS sample backend: snake_case, absolute milliseconds.
            (#"{"token":"JWT","creation_timestamp_ms":1800000000000,"expiration_timestamp_ms":1800001800000}"#, 1800.0),
            // JavaScript style: relative seconds.
            (#"{"token":"JWT","expiresInSeconds":3000}"#, 3000.0),
            // Absolute seconds, a server that hands out shorter lives than the JWT says.
            (#"{"jwt":"JWT","expirationTimestamp":1800000900}"#, 900.0),
            // Relative, read by magnitude.
            (#"{"jwt":"JWT","expiresInSeconds":120}"#, 120.0),
            // No expiry at all.
            (#"{"jwt":"JWT"}"#, 3600.0),
        ] as [(String, Double)]
    )
    func detection(_ json: String, _ lifetime: Double) throws {
        let fetched = try Self.read(json.replacingOccurrences(of: "JWT", with: Self.jwt))
        #expect(fetched.jwt == Self.jwt)
        let effective = fetched.statedLifetime.map { Double($0.components.seconds) } ?? 3600
        #expect(min(effective, 3600) == lifetime)
    }

    @Test("explicit conventions, configurable keys, and malformed answers")
    func explicit() throws {
        #expect(
            try Self.read(#"{"jwt":"\#(Self.jwt)","expirationTimestamp":1800000900}"#, .absoluteSeconds).statedLifetime
                == .seconds(900)
        )
        #expect(
            try Self.read(#"{"jwt":"\#(Self.jwt)","expirationTimestamp":1800000900000}"#, .fromJWT).statedLifetime
                == nil
        )
        let custom = try TokenEndpointFetcher.read(
            Array(#"{"VEHICLE_TOKEN_KEY":"\#(Self.jwt)","TOKEN_EXPIRATION":600}"#.utf8),
            keys: .init(token: ["VEHICLE_TOKEN_KEY"], expiry: ["TOKEN_EXPIRATION"]),
            expiry: .relativeSeconds
        )
        #expect(custom.statedLifetime == .seconds(600))
        for bad in ["[]", #"{"jwt":""}"#, #"{"jwt":"a.b.c"}"#, #"{"other":"x"}"#, "not json"] {
            expectCode(FleetTokenError(.malformedToken, "")) { try Self.read(bad) }
        }
    }

    @Test("the URL template takes the context's IDs, percent-encoded; a missing ID is an error")
    func urls() throws {
        let fetcher = TokenEndpointFetcher(urlTemplate: "http://127.0.0.1:1/token/driver/{vehicleId}")
        #expect(try fetcher.url(for: .vehicle("v 1/x")).absoluteString == "http://127.0.0.1:1/token/driver/v%201%2Fx")
        expectCode(FleetTokenError(.missingContext, "")) { try fetcher.url(for: .trip("t1")) }
    }

    @Test("an unreachable endpoint is a transient error")
    func unreachable() async throws {
        // Port 9 on loopback: nothing listens (connection refused).
        let fetcher = TokenEndpointFetcher(urlTemplate: "http://127.0.0.1:9/token/driver/{vehicleId}", timeout: 5)
        let error = await #expect(throws: FleetTokenError.self) { try await fetcher.fetchToken(for: .vehicle("v1")) }
        #expect(error?.code == .endpointUnavailable && error?.isTransient == true)
    }
}
