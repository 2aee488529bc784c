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
            let text = try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                return String(buffer: response.body)
            }
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
            #expect(text.contains(#"fleet_engine_token_verification_seconds_count{source="cache"} 1"#))
        }
    }
}
