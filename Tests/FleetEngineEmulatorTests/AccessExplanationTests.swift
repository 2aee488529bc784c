import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FleetEngineEmulator

@Suite("Access explanation (token verify --explain) and the request log's lines")
struct AccessExplanationTests {
    typealias F = EmulatorFixture
    let vehicles = "/v1/providers/demo-project/vehicles"

    static func explain(
        _ token: String,
        _ rpc: String,
        _ resource: String,
        mask: [String] = [],
        now: Date = Date()
    ) throws -> JSONObject {
        try AccessExplanation.explain(
            token: token,
            rpc: rpc,
            resource: resource,
            updateMask: mask,
            accounts: F.accounts,
            now: now
        )
    }

    @Test("offline, each call gets the decision the request log writes for it")
    func sameAsTheLog() async throws {
        let clock = ManualClock()
        let server = EmulatorServer(accounts: F.accounts, store: try SQLiteFleetStore(inMemory: ()), clock: clock)
        let calls:
            [(
                token: String, method: HTTPRequest.Method, uri: String, body: String?, rpc: String, resource: String,
                mask: [String]
            )] = [
                (
                    F.driver("v1"), .put, "\(vehicles)/v1?updateMask=lastLocation",
                    #"{"lastLocation":{"location":{"latitude":1,"longitude":2}}}"#, "UpdateVehicle",
                    "providers/demo-project/vehicles/v1", ["lastLocation"]
                ),
                (
                    F.driver("v2"), .put, "\(vehicles)/v1?updateMask=lastLocation",
                    #"{"lastLocation":{"location":{"latitude":1,"longitude":2}}}"#, "UpdateVehicle",
                    "providers/demo-project/vehicles/v1", ["lastLocation"]
                ),
                (
                    F.driver("v1"), .put, "\(vehicles)/v1?updateMask=maximumCapacity", #"{"maximumCapacity":3}"#,
                    "UpdateVehicle", "providers/demo-project/vehicles/v1", ["maximumCapacity"]
                ),
                (F.consumer("t1"), .get, "\(vehicles)/v1", nil, "GetVehicle", "providers/demo-project/vehicles/v1", []),
                (
                    F.token(F.otherProjectKey, .server), .get, "\(vehicles)/v1", nil, "GetVehicle",
                    "providers/demo-project/vehicles/v1", []
                ),
                (F.server + "x", .get, "\(vehicles)/v1", nil, "GetVehicle", "providers/demo-project/vehicles/v1", []),
            ]
        try await Application(router: server.router).test(.router) { client in
            #expect(
                try await client.call(.post, "\(vehicles)?vehicleId=v1", token: F.server, body: F.vehicleBody).0 == .ok
            )
            for call in calls { _ = try await client.call(call.method, call.uri, token: call.token, body: call.body) }
            let (_, answer) = try await RequestLogTests.list(client, pageSize: 100)
            let entries = RequestLogTests.entries(answer).dropFirst()
            try #require(entries.count == calls.count)
            for (call, entry) in zip(calls, entries) {
                let logged = try #require(RequestLogTests.decision(entry))
                let offline = try Self.explain(
                    call.token,
                    call.rpc,
                    call.resource,
                    mask: call.mask,
                    now: clock.currentDate
                )
                #expect(offline == logged, "\(call.uri)")
            }
            let outcomes = entries.compactMap { RequestLogTests.decision($0)?["check"]?.stringValue }
            #expect(outcomes == ["policy", "claims", "role", "claims", "provider", "token"])
        }
    }

    @Test("an expired token is explained with the clock it was judged by; an unknown RPC is named")
    func expiredAndUnknown() throws {
        let now = Date()
        let decision = try Self.explain(
            F.driver("v1"),
            "UpdateVehicle",
            "providers/demo-project/vehicles/v1",
            now: now.addingTimeInterval(7200)
        )
        #expect(decision["reason"]?.stringValue == "expired")
        #expect(decision["explanation"]?.stringValue?.contains("expired at") ?? false)
        #expect(throws: GoogleAPIError.self) { try Self.explain(F.server, "FlyVehicle", "providers/demo-project") }
        #expect(throws: GoogleAPIError.self) { try Self.explain(F.server, "GetVehicle", "vehicles/v1") }
        let list = try Self.explain(
            F.server,
            "maps.fleetengine.v1.VehicleService/ListVehicles",
            "providers/demo-project"
        )
        #expect(list["outcome"]?.stringValue == "ALLOWED")
    }

    @Test("a line per entry: time, code, transport, method, names, and the reason of a refusal")
    func lines() {
        var entry = JSONObject()
        entry["timestamp"] = "2026-12-04T02:10:00.123456Z"
        entry["labels"] = ["vehicle_id": "v1"]
        entry["jsonPayload"] = [
            "@type": "type.googleapis.com/maps.fleetengine.v1.UpdateVehicleLog",
            "fleetauthTransport": "grpc",
            "errorResponse": ["code": "PERMISSION_DENIED", "message": "Permission denied."],
            "fleetauthDecision": ["outcome": "REFUSED", "explanation": "The claims do not cover vehicle v1."],
        ]
        #expect(
            RequestLogLine.format(entry)
                == "2026-12-04T02:10:00.123456Z  PERMISSION_DENIED  grpc  UpdateVehicle  vehicle_id=v1  The claims do not cover vehicle v1."
        )
        entry["jsonPayload"] = ["@type": "type.googleapis.com/maps.fleetengine.delivery.log.v1.GetTaskLog"]
        entry["labels"] = nil
        #expect(RequestLogLine.format(entry) == "2026-12-04T02:10:00.123456Z  OK  -  GetTask")
    }
}
