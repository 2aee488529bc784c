import FleetAuthCore
import FleetAuthJWT
import FleetAuthTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The proto contract over REST: what a backend written against `maps.fleetengine.v1` sends and expects, and what
/// the proto3 JSON mapping accepts and refuses.
@Suite("Proto contract over REST")
struct ProtoContractTests {
    typealias F = EmulatorFixture
    static let vehicles = "/v1/providers/demo-project/vehicles"
    static let trips = "/v1/providers/demo-project/trips"

    /// A vehicle body: ONLINE at the pickup (37.4, -122.1), with `extra` members.
    static func vehicle(_ extra: String = "") -> String {
        #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE","SHARED"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"},"lastLocation":{"location":{"latitude":37.4,"longitude":-122.1}}"#
            + (extra.isEmpty ? "" : "," + extra) + "}"
    }

    static func withEmulator(
        clock: any WallClock = .system,
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let server = EmulatorServer(accounts: F.accounts, store: try SQLiteFleetStore(inMemory: ()), clock: clock)
        try await Application(router: server.router).test(.router) { client in try await body(client) }
    }

    /// A time as proto3 JSON writes the emulator's millisecond timestamps.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000
        let text = formatter.string(from: Date(timeIntervalSince1970: milliseconds))
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }

    static func names(_ body: JSONObject, _ member: String) -> [String] {
        (body[member]?.arrayValue ?? []).compactMap { item in
            let object = item.objectValue
            let name = object?["name"]?.stringValue ?? object?["vehicle"]?.objectValue?["name"]?.stringValue
            return name?.split(separator: "/").last.map(String.init)
        }
    }

    @Test("REST path segments are percent-decoded once, then checked as IDs")
    func percentDecoding() async throws {
        try await Self.withEmulator { client in
            let (created, body) = try await client.call(
                .post,
                "\(Self.vehicles)?vehicleId=v%C3%A9h",
                token: F.server,
                body: Self.vehicle()
            )
            #expect(created == .ok, "\(body.jsonText)")
            #expect(body["name"]?.stringValue == "providers/demo-project/vehicles/véh")
            let driver = F.driver("véh")
            #expect(try await client.call(.get, "\(Self.vehicles)/v%C3%A9h", token: driver).0 == .ok)
            let move = #"{"lastLocation":{"location":{"latitude":37.41,"longitude":-122.11}}}"#
            #expect(
                try await client.call(
                    .put,
                    "\(Self.vehicles)/v%C3%A9h?updateMask=last_location",
                    token: driver,
                    body: move
                ).0 == .ok
            )
            // A decoded slash is an invalid ID, never a path step; a second decoding never happens.
            #expect(try await client.call(.get, "\(Self.vehicles)/v%2F..", token: F.server).0 == .badRequest)
            #expect(
                [.badRequest, .notFound].contains(
                    try await client.call(.get, "\(Self.vehicles)/v%25C3%25A9h", token: F.server).0
                )
            )
        }
    }

    @Test("the proto3 JSON mapping: either field spelling, enum numbers, 64-bit integers as strings; refusals named")
    func protoJSON() async throws {
        try await Self.withEmulator { client in
            let snake =
                #"{"vehicle_state":2,"supported_trip_types":[2],"maximum_capacity":"4","vehicle_type":{"category":1}}"#
            let (status, body) = try await client.call(
                .post,
                "\(Self.vehicles)?vehicleId=v1",
                token: F.server,
                body: snake
            )
            #expect(status == .ok, "\(body.jsonText)")
            #expect(body["vehicleState"]?.stringValue == "ONLINE")
            #expect(body["maximumCapacity"]?.integerValue == 4)
            #expect(body["vehicleType"]?.objectValue?["category"]?.stringValue == "AUTO")
            #expect(body["availableCapacity"] == nil)
            #expect(body["currentTrips"] == nil, "empty repeated fields are omitted")

            for (bad, mentions) in [
                (#"{"vehicleState":"FLYING"}"#, "vehicleState"),
                (#"{"maximumCapacity":4.5}"#, "maximumCapacity"),
                (#"{"availableCapacity":3}"#, "availableCapacity"),
                (#"{"vehicleType":{"category":"AUTO","color":"red"}}"#, "color"),
                (#"{"lastLocation":{"location":{"latitude":"north"}}}"#, "latitude"),
            ] {
                let (status, body) = try await client.call(
                    .post,
                    "\(Self.vehicles)?vehicleId=v2",
                    token: F.server,
                    body: bad
                )
                #expect(status == .badRequest, "\(bad)")
                let message = body["error"]?.objectValue?["message"]?.stringValue ?? ""
                #expect(message.contains(mentions), "\(bad): \(message)")
            }
            #expect(try await client.call(.get, "\(Self.vehicles)/v2", token: F.server).0 == .notFound)
        }
    }

    @Test("vehicle attributes: value mirrored into its typed field, one value each, unique keys")
    func attributes() async throws {
        try await Self.withEmulator { client in
            let (status, body) = try await client.call(
                .post,
                "\(Self.vehicles)?vehicleId=v1",
                token: F.server,
                body: Self.vehicle(#""attributes":[{"key":"color","value":"red"},{"key":"ramp","boolValue":true}]"#)
            )
            #expect(status == .ok, "\(body.jsonText)")
            let attributes = body["attributes"]?.arrayValue?.compactMap(\.objectValue) ?? []
            #expect(attributes.first?["stringValue"]?.stringValue == "red")
            #expect(attributes.first?["value"]?.stringValue == "red")
            #expect(attributes.last?["boolValue"] == .bool(true))
            #expect(attributes.last?["value"]?.stringValue == "true")
            for bad in [
                #""attributes":[{"key":"a","stringValue":"x","boolValue":true}]"#,
                #""attributes":[{"key":"a","value":"x","stringValue":"y"}]"#,
                #""attributes":[{"key":"a","value":"x"},{"key":"a","value":"y"}]"#,
                #""attributes":[{"value":"x"}]"#,
            ] {
                let (status, body) = try await client.call(
                    .post,
                    "\(Self.vehicles)?vehicleId=v2",
                    token: F.server,
                    body: Self.vehicle(bad)
                )
                #expect(status == .badRequest, "\(bad): \(body.jsonText)")
            }
            // Trip attributes have no `value`: the mapping refuses it as an unknown field.
            let trip = String(HTTPMatrixTests.tripBody.dropLast()) + #","attributes":[{"key":"a","value":"x"}]}"#
            #expect(
                try await client.call(.post, "\(Self.trips)?tripId=t1", token: F.server, body: trip).0 == .badRequest
            )
            let good = String(HTTPMatrixTests.tripBody.dropLast()) + #","attributes":[{"key":"a","stringValue":"x"}]}"#
            #expect(try await client.call(.post, "\(Self.trips)?tripId=t1", token: F.server, body: good).0 == .ok)
        }
    }

    @Test("nested messages are checked: waypoints, device settings, route points")
    func nested() async throws {
        try await Self.withEmulator { client in
            for bad in [
                #""waypoints":[{"location":{"point":{"latitude":91,"longitude":0}},"tripId":"t1","waypointType":"PICKUP_WAYPOINT_TYPE"}]"#,
                #""deviceSettings":{"locationPowerSaveMode":"SOMETIMES"}"#,
                #""currentRouteSegmentTraffic":{"trafficRendering":{"roadStretch":[{"style":"PURPLE"}]}}"#,
                #""route":[{"latitude":0,"longitude":200}]"#,
            ] {
                let (status, body) = try await client.call(
                    .post,
                    "\(Self.vehicles)?vehicleId=v1",
                    token: F.server,
                    body: Self.vehicle(bad)
                )
                #expect(status == .badRequest, "\(bad): \(body.jsonText)")
            }
        }
    }

    @Test("ListVehicles applies every filter and counts all matches in totalSize")
    func listFilters() async throws {
        try await Self.withEmulator { client in
            let bodies = [
                "a": Self.vehicle(#""attributes":[{"key":"color","value":"red"},{"key":"size","value":"l"}]"#),
                "b": Self.vehicle(#""attributes":[{"key":"color","value":"blue"}]"#)
                    .replacingOccurrences(of: "37.4", with: "38.4"),
                "c": Self.vehicle().replacingOccurrences(of: "ONLINE", with: "OFFLINE")
                    .replacingOccurrences(of: #""maximumCapacity":4"#, with: #""maximumCapacity":8"#)
                    .replacingOccurrences(of: "AUTO", with: "TWO_WHEELER"),
            ]
            for (id, body) in bodies.sorted(by: { $0.key < $1.key }) {
                let (status, answer) = try await client.call(
                    .post,
                    "\(Self.vehicles)?vehicleId=\(id)",
                    token: F.server,
                    body: body
                )
                try #require(status == .ok, "\(answer.jsonText)")
            }
            // `vehicleTypeCategories` is required (Google: "Required."); both categories of the fleet are named.
            let both = "vehicleTypeCategories=AUTO&vehicleTypeCategories=TWO_WHEELER"
            for (query, expected) in [
                (both, ["a", "b", "c"]),
                ("vehicleState=ONLINE", ["a", "b"]),
                ("vehicleTypeCategories=TWO_WHEELER", ["c"]),
                ("minimumCapacity=5", ["c"]),
                ("tripTypes=SHARED", ["a", "b", "c"]),
                ("requiredAttributes=color:red", ["a"]),
                ("requiredAttributes=color:red&requiredAttributes=size:l", ["a"]),
                ("requiredOneOfAttributes=color:blue%7Ccolor:green", ["b"]),
                ("requiredOneOfAttributeSets=color:red%7Csize:l&requiredOneOfAttributeSets=color:blue", ["a", "b"]),
                ("filter=attributes.color%3D%22blue%22", ["b"]),
                (
                    "viewport.low.latitude=38&viewport.low.longitude=-123&viewport.high.latitude=39&viewport.high.longitude=-122",
                    ["b"]
                ),
                ("onTripOnly=true", []),
            ] {
                let named = query.contains("vehicleTypeCategories") ? query : "\(both)&\(query)"
                let (status, body) = try await client.call(.get, "\(Self.vehicles)?\(named)", token: F.server)
                #expect(status == .ok, "\(query): \(body.jsonText)")
                #expect(Self.names(body, "vehicles") == expected, "\(query)")
                // int64 as a string; zero, the default, is omitted.
                #expect(body["totalSize"]?.stringValue ?? "0" == "\(expected.count)", "\(query): \(body.jsonText)")
            }
            let (_, first) = try await client.call(.get, "\(Self.vehicles)?\(both)&pageSize=2", token: F.server)
            #expect(Self.names(first, "vehicles") == ["a", "b"])
            #expect(first["totalSize"]?.stringValue == "3")
            let next = try #require(first["nextPageToken"]?.stringValue)
            let (_, second) = try await client.call(
                .get,
                "\(Self.vehicles)?\(both)&pageSize=2&pageToken=\(next)",
                token: F.server
            )
            #expect(Self.names(second, "vehicles") == ["c"])
            #expect(second["nextPageToken"] == nil)
            #expect(
                try await client.call(.get, "\(Self.vehicles)?\(both)&filter=attributes.color%3D", token: F.server).0
                    == .badRequest
            )
            #expect(
                try await client.call(.get, "\(Self.vehicles)?\(both)&vehicleState=FLYING", token: F.server).0
                    == .badRequest
            )
            let (unnamed, refusal) = try await client.call(.get, "\(Self.vehicles)?pageSize=2", token: F.server)
            #expect(unnamed == .badRequest)
            #expect(
                refusal["error"]?.objectValue?["message"]?.stringValue == "vehicleTypeCategories is required.",
                "\(refusal.jsonText)"
            )
        }
    }

    static let searchBody =
        #"{"pickupPoint":{"point":{"latitude":37.4,"longitude":-122.1}},"dropoffPoint":{"point":{"latitude":37.45,"longitude":-122.15}},"pickupRadiusMeters":2000,"count":10,"minimumCapacity":1,"tripTypes":["EXCLUSIVE"],"vehicleTypes":[{"category":"AUTO"}],"orderBy":"PICKUP_POINT_ETA""#

    @Test("SearchVehicles: attribute filters, the match's trip type, match type and ETAs")
    func searchAttributes() async throws {
        try await Self.withEmulator { client in
            for (id, color) in [("a", "red"), ("b", "blue")] {
                let body = Self.vehicle(#""attributes":[{"key":"color","value":"\#(color)"}]"#)
                try #require(
                    try await client.call(.post, "\(Self.vehicles)?vehicleId=\(id)", token: F.server, body: body).0
                        == .ok
                )
            }
            for (extra, expected) in [
                ("", ["a", "b"]),
                (#""requiredAttributes":[{"key":"color","stringValue":"red"}]"#, ["a"]),
                (
                    #""requiredOneOfAttributes":[{"attributes":[{"key":"color","value":"blue"},{"key":"color","value":"x"}]}]"#,
                    ["b"]
                ),
                (
                    #""requiredOneOfAttributeSets":[{"attributes":[{"key":"color","value":"x"}]},{"attributes":[{"key":"color","value":"red"}]}]"#,
                    ["a"]
                ),
                (#""filter":"attributes.color=\"blue\" OR attributes.color=\"red\"""#, ["a", "b"]),
                (#""filter":"NOT attributes.color=\"blue\"""#, ["a"]),
            ] {
                let body = Self.searchBody + (extra.isEmpty ? "" : "," + extra) + "}"
                let (status, answer) = try await client.call(
                    .post,
                    "\(Self.vehicles):search",
                    token: F.server,
                    body: body
                )
                #expect(status == .ok, "\(extra): \(answer.jsonText)")
                #expect(Set(Self.names(answer, "matches")) == Set(expected), "\(extra)")
                for match in answer["matches"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
                    #expect(match["tripType"]?.stringValue == "EXCLUSIVE")
                    #expect(match["vehicleMatchType"]?.stringValue == "EXCLUSIVE")
                    #expect(match["vehiclePickupEta"] != nil)
                    #expect(match["vehicleDropoffEta"] != nil)
                    #expect(match["vehiclePickupToDropoffDistanceMeters"] != nil)
                    #expect((match["vehicleTripsWaypoints"]?.arrayValue?.count ?? 0) == 2)
                }
            }
        }
    }

    @Test("a filter nested past 32 levels or over 4 KiB is INVALID_ARGUMENT naming the limit, not a crash")
    func hostileFilters() async throws {
        try await Self.withEmulator { client in
            let restriction = #"attributes.color=\"red\""#
            for (filter, limit) in [
                // Each of these overflowed the recursive parser's stack and took the emulator down.
                (String(repeating: "-", count: 30_000) + restriction, "longer than 4096 bytes"),
                (String(repeating: "(", count: 4_000), "nests deeper than 32 levels"),
                // What fuzz-filter found in the unbounded parser within seconds (Fuzz/proof).
                (String(repeating: "(", count: 165), "nests deeper than 32 levels"),
                (String(repeating: "NOT ", count: 33) + restriction, "nests deeper than 32 levels"),
                (String(repeating: "- ", count: 20) + String(repeating: "(", count: 13) + restriction, "nests deeper"),
            ] {
                let body = Self.searchBody + #","filter":""# + filter + #""}"#
                let (status, answer) = try await client.call(
                    .post,
                    "\(Self.vehicles):search",
                    token: F.server,
                    body: body
                )
                #expect(status == .badRequest, "\(filter.prefix(40))")
                #expect(
                    answer["error"]?.objectValue?["message"]?.stringValue?.contains(limit) == true,
                    "\(answer.jsonText.prefix(300))"
                )
            }
            // 32 levels are fine, and the emulator is still serving.
            let deep = String(repeating: "NOT ", count: 32) + restriction
            let (status, answer) = try await client.call(
                .post,
                "\(Self.vehicles):search",
                token: F.server,
                body: Self.searchBody + #","filter":""# + deep + #""}"#
            )
            #expect(status == .ok, "\(answer.jsonText.prefix(300))")
        }
    }

    @Test("includeBackToBack: a vehicle with one trip en route to its drop-off, as a BACK_TO_BACK match")
    func backToBack() async throws {
        try await Self.withEmulator { client in
            try #require(
                try await client.call(
                    .post,
                    "\(Self.vehicles)?vehicleId=v1",
                    token: F.server,
                    body: Self.vehicle(#""backToBackEnabled":true"#)
                ).0 == .ok
            )
            try #require(
                try await client.call(.post, "\(Self.trips)?tripId=t1", token: F.server, body: HTTPMatrixTests.tripBody)
                    .0 == .ok
            )
            try #require(
                try await client.call(
                    .put,
                    "\(Self.trips)/t1?updateMask=vehicle_id",
                    token: F.server,
                    body: #"{"vehicleId":"v1"}"#
                ).0 == .ok
            )
            func search(_ extra: String) async throws -> JSONObject {
                let (status, body) = try await client.call(
                    .post,
                    "\(Self.vehicles):search",
                    token: F.server,
                    body: Self.searchBody + extra + "}"
                )
                #expect(status == .ok, "\(body.jsonText)")
                return body
            }
            // On the way to the pickup: not a back-to-back candidate.
            #expect(Self.names(try await search(#","includeBackToBack":true"#), "matches").isEmpty)
            for status in ["ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF"] {
                try #require(
                    try await client.call(
                        .put,
                        "\(Self.trips)/t1?updateMask=trip_status",
                        token: F.server,
                        body: #"{"tripStatus":"\#(status)"}"#
                    ).0 == .ok
                )
            }
            #expect(Self.names(try await search(""), "matches").isEmpty)
            let found = try await search(#","includeBackToBack":true"#)
            #expect(Self.names(found, "matches") == ["v1"])
            let match = found["matches"]?.arrayValue?.first?.objectValue
            #expect(match?["vehicleMatchType"]?.stringValue == "BACK_TO_BACK")
            // It finishes its drop-off first: three stops.
            #expect(match?["vehicleTripsWaypoints"]?.arrayValue?.count == 3)
            #expect(Self.names(try await search(#","currentTripsPresent":"ANY""#), "matches") == ["v1"])
            #expect(Self.names(try await search(#","currentTripsPresent":"NONE""#), "matches").isEmpty)
        }
    }

    @Test("SearchTrips without a vehicle lists the provider's trips; minimumStaleness keeps only quiet ones")
    func searchTrips() async throws {
        let clock = ManualClock()
        try await Self.withEmulator(clock: clock) { client in
            for id in ["t1", "t2"] {
                try #require(
                    try await client.call(
                        .post,
                        "\(Self.trips)?tripId=\(id)",
                        token: F.server,
                        body: HTTPMatrixTests.tripBody
                    )
                    .0 == .ok
                )
            }
            clock.advance(by: .seconds(600))
            try #require(
                try await client.call(
                    .put,
                    "\(Self.trips)/t2?updateMask=dropoff_point",
                    token: F.server,
                    body: #"{"dropoffPoint":{"point":{"latitude":37.6,"longitude":-122.3}}}"#
                ).0 == .ok
            )
            let (status, all) = try await client.call(.post, "\(Self.trips):search", token: F.server, body: "{}")
            #expect(status == .ok)
            #expect(Self.names(all, "trips") == ["t1", "t2"])
            let (_, quiet) = try await client.call(
                .post,
                "\(Self.trips):search",
                token: F.server,
                body: #"{"minimumStaleness":"300s"}"#
            )
            #expect(Self.names(quiet, "trips") == ["t1"])
        }
    }

    @Test("ReportBillableTrip is routed and checked")
    func billable() async throws {
        try await Self.withEmulator { client in
            let path = "/v1/providers/demo-project/billableTrips/t1:report"
            let (status, body) = try await client.call(
                .post,
                path,
                token: F.server,
                body: #"{"countryCode":"US","platform":"IOS","relatedIds":["t0"]}"#
            )
            #expect(status == .ok, "\(body.jsonText)")
            #expect(body.isEmpty)
            let (missing, error) = try await client.call(.post, path, token: F.server, body: "{}")
            #expect(missing == .badRequest)
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("countryCode") == true)
        }
    }

    @Test("trips: times of pickup and drop-off, estimates from the vehicle, versions, input-only fields not echoed")
    func tripFields() async throws {
        // Tokens minted before the clock starts (see the gRPC parity test): one minted over a minute later would
        // expire more than an hour after the clock's now.
        let driver = F.driver("v1")
        let consumer = F.consumer("t1")
        let clock = ManualClock()
        try await Self.withEmulator(clock: clock) { client in
            try #require(
                try await client.call(.post, "\(Self.vehicles)?vehicleId=v1", token: F.server, body: Self.vehicle()).0
                    == .ok
            )
            let created = try await client.call(
                .post,
                "\(Self.trips)?tripId=t1",
                token: F.server,
                body: String(HTTPMatrixTests.tripBody.dropLast())
                    + #","intermediateDestinations":[{"point":{"latitude":37.42,"longitude":-122.12}}]}"#
            )
            #expect(created.0 == .ok, "\(created.1.jsonText)")
            #expect(created.1["intermediateDestinationsVersion"] != nil)
            let assign = try await client.call(
                .put,
                "\(Self.trips)/t1?updateMask=vehicle_id",
                token: F.server,
                body: #"{"vehicleId":"v1"}"#
            )
            #expect(assign.0 == .ok)
            // The vehicle's waypoints come from its trip.
            let (_, vehicle) = try await client.call(.get, "\(Self.vehicles)/v1", token: F.server)
            let types = vehicle["waypoints"]?.arrayValue?.compactMap { $0.objectValue?["waypointType"]?.stringValue }
            #expect(
                types == ["PICKUP_WAYPOINT_TYPE", "INTERMEDIATE_DESTINATION_WAYPOINT_TYPE", "DROP_OFF_WAYPOINT_TYPE"]
            )
            #expect(vehicle["waypointsVersion"] != nil)

            // The driver reports its remaining time; it is kept and sets the ETA.
            let report = try await client.call(
                .put,
                "\(Self.vehicles)/v1?updateMask=remaining_time_seconds,remaining_distance_meters",
                token: driver,
                body: #"{"remainingTimeSeconds":120,"remainingDistanceMeters":900}"#
            )
            #expect(report.0 == .ok, "\(report.1.jsonText)")
            // Input only: not echoed, but it sets the ETA to the first waypoint.
            #expect(report.1["remainingTimeSeconds"] == nil)
            let eta = try #require(report.1["etaToFirstWaypoint"]?.stringValue)
            #expect(eta == Self.timestamp(clock.currentDate.addingTimeInterval(120)))

            // Input-only actual points are stored, not echoed; the version check refuses a stale version.
            let arrived = try await client.call(
                .put,
                "\(Self.trips)/t1?updateMask=trip_status,actual_pickup_point",
                token: F.server,
                body:
                    #"{"tripStatus":"ARRIVED_AT_PICKUP","actualPickupPoint":{"point":{"latitude":37.4,"longitude":-122.1}}}"#
            )
            #expect(arrived.0 == .ok, "\(arrived.1.jsonText)")
            #expect(arrived.1["actualPickupPoint"] == nil)
            let stale = try await client.call(
                .put,
                "\(Self.trips)/t1?updateMask=intermediate_destinations_version",
                token: F.server,
                body: #"{"intermediateDestinationsVersion":"2001-01-01T00:00:00Z"}"#
            )
            #expect(stale.0 == .badRequest)
            #expect(stale.1["error"]?.objectValue?["status"]?.stringValue == "FAILED_PRECONDITION")

            clock.advance(by: .seconds(60))
            for status in [
                "ENROUTE_TO_INTERMEDIATE_DESTINATION", "ARRIVED_AT_INTERMEDIATE_DESTINATION", "ENROUTE_TO_DROPOFF",
            ] {
                let (answer, body) = try await client.call(
                    .put,
                    "\(Self.trips)/t1?updateMask=trip_status,intermediate_destination_index",
                    token: F.server,
                    body: #"{"tripStatus":"\#(status)","intermediateDestinationIndex":0}"#
                )
                #expect(answer == .ok, "\(status): \(body.jsonText)")
            }
            let (_, onboard) = try await client.call(.get, "\(Self.trips)/t1", token: consumer)
            #expect(onboard["pickupTime"] != nil)
            #expect(onboard["dropoffTime"] != nil, "an estimate while the rider is on board")
            #expect(onboard["remainingDistanceMeters"] != nil)
            #expect(onboard["etaToFirstWaypoint"] != nil)
            #expect(onboard["remainingTimeToFirstWaypoint"] != nil)
            #expect(onboard["vehicleWaypoints"] == nil)
            #expect(onboard["actualPickupPoint"] == nil)
            clock.advance(by: .seconds(60))
            let (_, complete) = try await client.call(
                .put,
                "\(Self.trips)/t1?updateMask=trip_status",
                token: F.server,
                body: #"{"tripStatus":"COMPLETE"}"#
            )
            #expect(complete["dropoffTime"]?.stringValue == Self.timestamp(clock.currentDate))
            #expect(complete["pickupTime"] == onboard["pickupTime"])
        }
    }
}
