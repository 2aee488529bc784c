import FleetAuthCore
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("SearchVehicles and UpdateVehicleAttributes")
struct VehicleSearchTests {
    typealias F = EmulatorFixture
    let vehicles = "/v1/providers/demo-project/vehicles"

    func vehicle(_ category: String, latitude: Double, state: String = "ONLINE", capacity: Int = 4) -> String {
        #"{"vehicleState":"\#(state)","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":\#(capacity),"vehicleType":{"category":"\#(category)"},"lastLocation":{"location":{"latitude":\#(latitude),"longitude":-122.0}}}"#
    }

    func search(_ extra: String = "") -> String {
        #"{"pickupPoint":{"point":{"latitude":37.0,"longitude":-122.0}},"pickupRadiusMeters":5000,"count":10,"minimumCapacity":2,"tripTypes":["EXCLUSIVE"],"vehicleTypes":[{"category":"AUTO"}],"orderBy":"PICKUP_POINT_ETA"\#(extra)}"#
    }

    @Test(
        "the required-attribute fields hold at most 100 pairs together: more is 400, never the database's error"
    )
    func attributeConditionsCapped() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            _ = try await client.call(
                .post,
                "\(vehicles)?vehicleId=v",
                token: F.server,
                body: vehicle("AUTO", latitude: 37)
            )
            func oneOf(_ count: Int) -> String {
                let pairs = (0..<count).map { #"{"key":"k\#($0)","value":"v"}"# }.joined(separator: ",")
                return #","requiredOneOfAttributes":[{"attributes":[\#(pairs)]}]"#
            }
            // SearchVehicles, which a consumer's token reaches: 1,001 entries once reached SQLite's limits, and the
            // 500 answered with the whole SQL statement.
            for token in [F.consumer("t1"), F.server] {
                let (status, error) = try await client.call(
                    .post,
                    "\(vehicles):search",
                    token: token,
                    body: search(oneOf(1_001))
                )
                #expect(status == .badRequest, "\(error.jsonText)")
                let message = error["error"]?.objectValue?["message"]?.stringValue ?? ""
                #expect(message.contains("at most 100"), "\(message)")
                #expect(!message.contains("SELECT") && !message.contains("SQLite"), "\(message)")
                let (found, _) = try await client.call(
                    .post,
                    "\(vehicles):search",
                    token: token,
                    body: search(oneOf(100))
                )
                #expect(found == .ok)
            }
            // ListVehicles spells them in the query.
            let pairs = (0..<101).map { "k\($0):v" }.joined(separator: "|")
            let (listed, error) = try await client.call(
                .get,
                "\(vehicles)?\(F.autos)&requiredOneOfAttributes=\(pairs)",
                token: F.server
            )
            #expect(listed == .badRequest, "\(error.jsonText)")
        }
    }

    @Test("finds online vehicles of the type, capacity and radius, nearest first")
    func searchFilters() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            _ = try await client.call(
                // ~3.3 km
                .post,
                "\(vehicles)?vehicleId=far",
                token: F.server,
                body: vehicle("AUTO", latitude: 37.03)
            )
            _ = try await client.call(
                // ~1.1 km
                .post,
                "\(vehicles)?vehicleId=near",
                token: F.server,
                body: vehicle("AUTO", latitude: 37.01)
            )
            _ = try await client.call(
                // ~11 km
                .post,
                "\(vehicles)?vehicleId=outside",
                token: F.server,
                body: vehicle("AUTO", latitude: 37.1)
            )
            _ = try await client.call(
                .post,
                "\(vehicles)?vehicleId=taxi",
                token: F.server,
                body: vehicle("TAXI", latitude: 37.0)
            )
            _ = try await client.call(
                .post,
                "\(vehicles)?vehicleId=offline",
                token: F.server,
                body: vehicle("AUTO", latitude: 37.0, state: "OFFLINE")
            )
            _ = try await client.call(
                .post,
                "\(vehicles)?vehicleId=small",
                token: F.server,
                body: vehicle("AUTO", latitude: 37.0, capacity: 1)
            )
            let (status, result) = try await client.call(.post, "\(vehicles):search", token: F.server, body: search())
            #expect(status == .ok)
            let names = result["matches"]?.arrayValue?.compactMap {
                $0.objectValue?["vehicle"]?.objectValue?["name"]?.stringValue
            }
            #expect(names == ["providers/demo-project/vehicles/near", "providers/demo-project/vehicles/far"])
            let distance =
                result["matches"]?.arrayValue?.first?.objectValue?["vehiclePickupStraightLineDistanceMeters"]?
                .integerValue ?? 0
            #expect((1_000...1_200).contains(distance))
            // A consumer searches for its own trip.
            #expect(
                try await client.call(
                    .post,
                    "\(vehicles):search",
                    token: F.consumer("t1"),
                    body: search(#","tripId":"t1""#)
                ).0 == .ok
            )
            #expect(
                try await client.call(
                    .post,
                    "\(vehicles):search",
                    token: F.consumer("t1"),
                    body: search(#","tripId":"t2""#)
                ).0 == .forbidden
            )
            #expect(
                try await client.call(.post, "\(vehicles):search", token: F.driver("near"), body: search()).0
                    == .forbidden
            )
        }
    }

    @Test(
        "search requests are validated field by field",
        arguments: [
            (#"{"pickupRadiusMeters":399}"#, "pickupRadiusMeters"),
            (#"{"count":51}"#, "count"),
            (#"{"tripTypes":["EXCLUSIVE","SHARED"]}"#, "tripTypes"),
            (#"{"vehicleTypes":[{"category":"UNKNOWN"}]}"#, "vehicleTypes"),
            (#"{"orderBy":"FASTEST"}"#, "orderBy"),
        ]
    )
    func searchValidation(_ override: String, _ field: String) async throws {
        let fixture = try F()
        var body = try StrictJSONParser().parseObject(search())
        for member in try StrictJSONParser().parseObject(override) { body[member.key] = member.value }
        let text = body.jsonText
        try await fixture.application.test(.router) { client in
            let (status, error) = try await client.call(.post, "\(vehicles):search", token: F.server, body: text)
            #expect(status == .badRequest)
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains(field) == true, "\(error.jsonText)")
        }
    }

    @Test("UpdateVehicleAttributes merges by key and returns the full list; drivers may not call it")
    func attributes() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            _ = try await client.call(
                .post,
                "\(vehicles)?vehicleId=v1",
                token: F.server,
                body:
                    #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"},"attributes":[{"key":"colour","value":"red"},{"key":"seats","value":"4"}]}"#
            )
            let (status, result) = try await client.call(
                .post,
                "\(vehicles)/v1:updateAttributes",
                token: F.server,
                body: #"{"attributes":[{"key":"colour","value":"blue"},{"key":"pets","boolValue":true}]}"#
            )
            #expect(status == .ok)
            #expect(
                result["attributes"] == [
                    ["key": "colour", "value": "blue", "stringValue": "blue"],
                    ["key": "seats", "value": "4", "stringValue": "4"],
                    ["key": "pets", "value": "true", "boolValue": true],
                ]
            )
            #expect(
                try await client.call(
                    .post,
                    "\(vehicles)/v1:updateAttributes",
                    token: F.driver("v1"),
                    body: #"{"attributes":[{"key":"a","value":"b"}]}"#
                ).0 == .forbidden
            )
            #expect(
                try await client.call(
                    .post,
                    "\(vehicles)/v1:updateAttributes",
                    token: F.server,
                    body: #"{"attributes":[{"key":"a:b","value":"c"}]}"#
                ).0 == .badRequest
            )
            #expect(
                try await client.call(
                    .post,
                    "\(vehicles)/v1:updateAttributes",
                    token: F.server,
                    body: #"{"attributes":[]}"#
                ).0 == .badRequest
            )
        }
    }
}
