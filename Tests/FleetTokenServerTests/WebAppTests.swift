import FleetAuthCore
import FleetAuthServerTesting
import FleetTokenServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The browser pages as files: served with a strict content security policy, told where Fleet Engine is, and
/// nothing else reachable under /app. (What they do in a browser is tested in Chromium: Tests/Browser.)
@Suite("Token server: the browser pages", .temporaryResources)
struct WebAppTests {
    @Test("pages, scripts and config are served; the policy allows this server and Fleet Engine only")
    func pages() async throws {
        let fixture = try await TokenServerFixture()
        fixture.server.webApp.fleetEngineURL = "http://127.0.0.1:8787"
        try await fixture.application.test(.router) { client in
            for (path, type, marker) in [
                ("/app/trip/trip-1", "text/html", "/app/static/trip.js"),
                ("/app/console", "text/html", "/app/static/console.js"),
                ("/app/static/trip.js", "text/javascript", "./follow.js"),
                ("/app/static/shipment.js", "text/javascript", "./follow.js"),
                ("/app/static/follow.js", "text/javascript", "callFleetEngine"),
                ("/app/static/token-provider.js", "text/javascript", "expiresInSeconds"),
                ("/app/static/session.js", "text/javascript", "sessionStorage"),
                ("/app/static/map.js", "text/javascript", "SVGMap"),
                ("/app/static/console.js", "text/javascript", "/token/fleet_reader"),
                ("/app/static/app.css", "text/css", "map-path"),
            ] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(path)")
                    #expect(String(buffer: response.body).contains(marker), "\(path)")
                    let policy = response.headers[.contentSecurityPolicy] ?? ""
                    #expect(policy.contains("script-src 'self'") && policy.contains("default-src 'none'"))
                    #expect(policy.contains("connect-src 'self' http://127.0.0.1:8787"))
                    #expect(policy.contains("frame-ancestors 'none'"))
                }
            }
            let (status, config, _) = try await client.json(.get, "/app/config.json")
            #expect(status == .ok)
            #expect(config["fleetEngineURL"] == "http://127.0.0.1:8787" && config["project"] == "demo-project")
            #expect(config["tileURL"] == nil)
            for path in [
                "/app/static/nothing.js", "/app/static/..%2FTokenServer.swift", "/app/static/trip.html",
                "/app/static/", "/app/trip",
            ] {
                #expect(try await client.json(.get, path).0 == .notFound, "\(path)")
            }
        }
    }

    @Test("a tile URL is passed to the pages and allowed as an image source")
    func tiles() async throws {
        let fixture = try await TokenServerFixture()
        fixture.server.webApp.tileURL = "https://tiles.example.com/{z}/{x}/{y}.png"
        try await fixture.application.test(.router) { client in
            let (_, config, _) = try await client.json(.get, "/app/config.json")
            #expect(config["tileURL"] == "https://tiles.example.com/{z}/{x}/{y}.png")
            try await client.execute(uri: "/app/console", method: .get) { response in
                #expect(
                    response.headers[.contentSecurityPolicy]?.contains("img-src 'self' data: https://tiles.example.com")
                        == true
                )
            }
        }
    }
}
