import FleetAuthCore
import FleetAuthTesting
import Foundation
import Testing

@testable import FleetAuthClient

@Suite("Fleet Engine client: errors")
struct FleetEngineClientTests {
    static func error(_ status: Int, _ body: String) -> FleetEngineClientError {
        FleetEngineClient.error(rpc: "GetTrip", status: status, body: Data(body.utf8))
    }

    @Test("Google error bodies become typed errors; the body's status wins over the HTTP status")
    func googleBodies() {
        let denied = Self.error(
            403,
            #"{"error":{"code":403,"message":"The token does not cover trip t1","status":"PERMISSION_DENIED"}}"#
        )
        #expect(denied.code == .permissionDenied && denied.httpStatus == 403 && !denied.isTransient)
        #expect(denied.message == "GetTrip: The token does not cover trip t1")
        let precondition = Self.error(
            400,
            #"{"error":{"code":400,"message":"m","status":"FAILED_PRECONDITION"}}"#
        )
        #expect(precondition.code == .failedPrecondition)
        let overloaded = Self.error(429, #"{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}"#)
        #expect(overloaded.code == .resourceExhausted && overloaded.isTransient)
    }

    @Test("without a readable body the HTTP status decides; client-side code names in a body are ignored")
    func unreadableBodies() {
        let proxy = Self.error(502, "<html>Bad Gateway</html>")
        #expect(proxy.code == .unavailable && proxy.isTransient && proxy.message.contains("HTTP 502"))
        #expect(Self.error(504, "").code == .deadlineExceeded)
        #expect(Self.error(404, "{}").code == .notFound)
        #expect(Self.error(401, "").code == .unauthenticated)
        #expect(Self.error(418, "").code == .unknown)
        let spoofed = Self.error(400, #"{"error":{"status":"token_unavailable","message":"m"}}"#)
        #expect(spoofed.code == .invalidArgument)
    }

    @Test("an unreachable Fleet Engine is a transient error; the token was fetched once; bad IDs never leave")
    func unreachable() async throws {
        let fetcher = CountingTokenFetcher()
        let provider = CachingTokenProvider(fetcher: fetcher, clock: ManualClock())
        let client = FleetEngineClient(
            providerID: "demo-project",
            tokens: provider,
            baseURL: try #require(URL(string: "http://127.0.0.1:1")),
            timeout: 5
        )
        let failure = await #expect(throws: FleetEngineClientError.self) { try await client.getVehicle("v1") }
        #expect(failure?.code == .unreachable && failure?.isTransient == true)
        #expect(fetcher.fetchCount == 1)
        let empty = await #expect(throws: FleetEngineClientError.self) { try await client.getVehicle("") }
        #expect(empty?.code == .invalidArgument)
        #expect(try client.path("trips", "a/b?c") == "/v1/providers/demo-project/trips/a%2Fb%3Fc")
    }
}
