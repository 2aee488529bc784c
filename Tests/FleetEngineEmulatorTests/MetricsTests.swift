import FleetAuthCore
import FleetAuthJWT
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Metrics")
struct MetricsTests {
    typealias F = EmulatorFixture

    @Test("GET /metrics counts requests by route and status, rejections by reason, and verification latency")
    func metrics() async throws {
        let metrics = EmulatorMetrics()
        let authenticator = TokenAuthenticator(
            accounts: F.accounts,
            onRejection: { metrics.tokenRejected(reason: $0) },
            onAuthentication: { metrics.tokenAuthenticated(in: $0, cached: $1) }
        )
        let router = FleetEngineEmulator.makeRouter(
            authenticator: authenticator,
            store: try SQLiteFleetStore(inMemory: ()),
            metrics: metrics
        )
        let application = Application(router: router)
        try await application.test(.router) { client in
            let vehicles = "/v1/providers/demo-project/vehicles"
            _ = try await client.call(.post, "\(vehicles)?vehicleId=v1", token: F.server, body: F.vehicleBody)
            _ = try await client.call(.get, "\(vehicles)/v1", token: F.server)
            _ = try await client.call(.get, "\(vehicles)/v1", token: F.server + "A")
            _ = try await client.call(.get, "\(vehicles)/v1", token: F.driver("v2"))
            // Everything, the rejections by reason included, to a token that may list the whole fleet.
            let (status, text) = try await Self.metrics(client, token: F.server)
            #expect(status == .ok)
            #expect(
                text.contains(#"fleet_engine_requests_total{route="/v1/providers/{provider}/vehicles",status="200"} 1"#)
            )
            #expect(
                text.contains(
                    #"fleet_engine_requests_total{route="/v1/providers/{provider}/vehicles/{vehicle}",status="200"} 1"#
                )
            )
            #expect(
                text.contains(
                    #"fleet_engine_requests_total{route="/v1/providers/{provider}/vehicles/{vehicle}",status="401"} 1"#
                )
            )
            #expect(
                text.contains(
                    #"fleet_engine_requests_total{route="/v1/providers/{provider}/vehicles/{vehicle}",status="403"} 1"#
                )
            )
            #expect(text.contains(#"fleet_engine_token_rejections_total{reason="invalid_signature"} 1"#))
            #expect(text.contains(#"fleet_engine_token_rejections_total{reason="expired"} 0"#))
            #expect(text.contains(#"fleet_engine_token_verification_seconds_count{source="verifier"} 2"#))
            // The GET and the metrics read itself found the server token in the cache.
            #expect(text.contains(#"fleet_engine_token_verification_seconds_count{source="cache"} 2"#))
        }
    }

    @Test(
        "the rejections by reason stay off the public /metrics: only a fleet-wide token or the metrics listener reads them"
    )
    func restricted() async throws {
        let metrics = EmulatorMetrics()
        let authenticator = TokenAuthenticator(
            accounts: F.accounts,
            onRejection: { metrics.tokenRejected(reason: $0) },
            onAuthentication: { metrics.tokenAuthenticated(in: $0, cached: $1) }
        )
        let router = FleetEngineEmulator.makeRouter(
            authenticator: authenticator,
            store: try SQLiteFleetStore(inMemory: ()),
            metrics: metrics
        )
        try await Application(router: router).test(.router) { client in
            _ = try await client.call(.get, "/v1/providers/demo-project/vehicles/v1", token: F.server + "A")
            let (status, anyone) = try await Self.metrics(client, token: nil)
            #expect(status == .ok)
            #expect(anyone.contains("fleet_engine_requests_total"))
            #expect(!anyone.contains("fleet_engine_token_rejections"), "a forger could diff them around a request")
            // A token that may not list the fleet is refused as the API would refuse it; a forged one is 401.
            #expect(try await Self.metrics(client, token: F.consumer("t1")).0 == .forbidden)
            #expect(try await Self.metrics(client, token: F.driver("v1")).0 == .forbidden)
            #expect(try await Self.metrics(client, token: F.server + "A").0 == .unauthorized)
            let (granted, all) = try await Self.metrics(client, token: F.server)
            #expect(granted == .ok)
            #expect(all.contains(#"fleet_engine_token_rejections_total{reason="invalid_signature"} 2"#))
        }
        // The metrics listener serves everything without credentials.
        let listener = Application(router: FleetEngineEmulator.makeMetricsRouter(metrics: metrics))
        try await listener.test(.router) { client in
            let (status, text) = try await Self.metrics(client, token: nil)
            #expect(status == .ok)
            #expect(text.contains(#"fleet_engine_token_rejections_total{reason="invalid_signature"} 2"#))
        }
    }

    static func metrics(_ client: some TestClientProtocol, token: String?) async throws -> (HTTPResponse.Status, String)
    {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: "/metrics", method: .get, headers: headers) { response in
            if response.status == .ok { #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true) }
            return (response.status, String(buffer: response.body))
        }
    }
}
