import FleetAuthCore
import FleetAuthJWT
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Browsers calling the emulator from a page (journey sharing, the fleet console): preflights, allowed and refused
/// origins, no credentials, and bad tokens answered as before.
@Suite("CORS")
struct CORSTests {
    typealias F = EmulatorFixture
    static let page = "http://127.0.0.1:8788"
    static let vehicles = "/v1/providers/demo-project/vehicles"

    static func withEmulator(
        origins: [String] = [page],
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: F.accounts),
            store: try SQLiteFleetStore(inMemory: ()),
            allowedOrigins: origins
        )
        try await Application(router: router).test(.router) { client in try await body(client) }
    }

    static func preflight(
        _ client: any TestClientProtocol,
        _ path: String,
        origin: String,
        method: String = "GET",
        headers: String = "authorization"
    ) async throws -> (HTTPResponse.Status, HTTPFields) {
        try await client.execute(
            uri: path,
            method: .options,
            headers: [.origin: origin, .accessControlRequestMethod: method, .accessControlRequestHeaders: headers]
        ) { ($0.status, $0.headers) }
    }

    @Test(
        "a preflight from an allowed origin is answered for every /v1 route: Authorization and Content-Type, no credentials"
    )
    func preflight() async throws {
        try await Self.withEmulator { client in
            for (path, method) in [
                (Self.vehicles, "POST"), (Self.vehicles + "/v1", "GET"), (Self.vehicles + "/v1", "PUT"),
                (Self.vehicles + "/v1:updateAttributes", "POST"), (Self.vehicles + ":search", "POST"),
                ("/v1/providers/demo-project/trips/t1", "GET"), ("/v1/providers/demo-project/trips/t1", "PUT"),
                ("/v1/providers/demo-project/trips:search", "POST"), ("/metrics", "GET"),
            ] {
                let (status, headers) = try await Self.preflight(
                    client,
                    path,
                    origin: Self.page,
                    method: method,
                    headers: "authorization, content-type"
                )
                #expect(status == .noContent, "\(method) \(path)")
                #expect(headers[.accessControlAllowOrigin] == Self.page)
                #expect(headers[.accessControlAllowMethods]?.contains(method) == true)
                #expect(headers[.accessControlAllowHeaders] == "Authorization, Content-Type")
                #expect(headers[.accessControlAllowCredentials] == nil)
                #expect(headers[.vary] == "Origin")
            }
        }
    }

    @Test("responses to an allowed origin name it, 401s included, with the same body as without an origin")
    func allowedOrigin() async throws {
        try await Self.withEmulator { client in
            let created = try await client.execute(
                uri: Self.vehicles + "?vehicleId=v1",
                method: .post,
                headers: [.authorization: "Bearer \(F.server)", .contentType: "application/json", .origin: Self.page],
                body: ByteBuffer(string: F.vehicleBody)
            ) { $0 }
            #expect(created.status == .ok)
            #expect(created.headers[.accessControlAllowOrigin] == Self.page)
            #expect(created.headers[.accessControlAllowCredentials] == nil)
            func badToken(_ origin: String?) async throws -> (HTTPResponse.Status, String, HTTPFields) {
                var headers: HTTPFields = [.authorization: "Bearer \(F.server)A"]
                if let origin { headers[.origin] = origin }
                return try await client.execute(uri: Self.vehicles + "/v1", method: .get, headers: headers) {
                    ($0.status, String(buffer: $0.body), $0.headers)
                }
            }
            let (crossStatus, crossBody, crossHeaders) = try await badToken(Self.page)
            let (plainStatus, plainBody, plainHeaders) = try await badToken(nil)
            #expect(crossStatus == .unauthorized && plainStatus == .unauthorized)
            #expect(crossBody == plainBody)
            #expect(crossHeaders[.accessControlAllowOrigin] == Self.page)
            #expect(plainHeaders[.accessControlAllowOrigin] == nil)
            // Only the CORS headers differ.
            var stripped = crossHeaders
            stripped[.accessControlAllowOrigin] = nil
            stripped[.vary] = nil
            #expect(stripped[.contentType] == plainHeaders[.contentType])
            #expect(stripped[.wwwAuthenticate] == plainHeaders[.wwwAuthenticate])
        }
    }

    @Test("another origin: the preflight is refused, answers carry no CORS headers; none configured: no CORS at all")
    func refusedOrigins() async throws {
        try await Self.withEmulator { client in
            for origin in ["http://evil.example.com", "http://127.0.0.1:8789", "HTTP://127.0.0.1:8788", "null"] {
                let (status, headers) = try await Self.preflight(client, Self.vehicles + "/v1", origin: origin)
                #expect(status == .forbidden, "\(origin)")
                #expect(headers[.accessControlAllowOrigin] == nil)
                let answer = try await client.execute(
                    uri: Self.vehicles + "/v1",
                    method: .get,
                    headers: [.authorization: "Bearer \(F.server)", .origin: origin]
                ) { $0 }
                #expect(answer.headers[.accessControlAllowOrigin] == nil)
            }
        }
        try await Self.withEmulator(origins: []) { client in
            let (status, headers) = try await Self.preflight(client, Self.vehicles + "/v1", origin: Self.page)
            #expect(status != .noContent && headers[.accessControlAllowOrigin] == nil)
        }
        try await Self.withEmulator(origins: ["*"]) { client in
            let (status, headers) = try await Self.preflight(
                client,
                Self.vehicles + "/v1",
                origin: "http://any.example"
            )
            #expect(status == .noContent && headers[.accessControlAllowOrigin] == "http://any.example")
            #expect(headers[.accessControlAllowCredentials] == nil)
        }
    }
}
