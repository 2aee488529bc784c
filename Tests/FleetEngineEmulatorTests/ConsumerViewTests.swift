import FleetAuthCore
import FleetAuthServerTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import Hummingbird
import HummingbirdTesting
import SwiftProtobuf
import Testing

/// What a rider's token shows of the fleet: approximate vehicles from SearchVehicles, as Google documents for the
/// Consumer SDK, and its own trip without naming the other riders' trips (the AuthorizationModel article).
@Suite("What a consumer sees of vehicles and trips", .temporaryResources)
struct ConsumerViewTests {
    typealias F = EmulatorFixture
    static let vehicles = "/v1/providers/demo-project/vehicles"
    static let trips = "/v1/providers/demo-project/trips"

    /// A shared vehicle at `latitude` with a plate and an attribute.
    static func vehicle(latitude: Double) -> String {
        #"{"vehicleState":"ONLINE","supportedTripTypes":["SHARED","EXCLUSIVE"],"maximumCapacity":6,"vehicleType":{"category":"AUTO"},"licensePlate":{"countryCode":"US","lastCharacter":"7"},"attributes":[{"key":"driver","value":"alice"}],"lastLocation":{"location":{"latitude":\#(latitude),"longitude":-122.0},"heading":90}}"#
    }

    static let sharedTrip =
        #"{"tripType":"SHARED","numberOfPassengers":1,"pickupPoint":{"point":{"latitude":37.02,"longitude":-122.0}},"dropoffPoint":{"point":{"latitude":37.05,"longitude":-122.01}}}"#

    static let search =
        #"{"pickupPoint":{"point":{"latitude":37.0,"longitude":-122.0}},"pickupRadiusMeters":5000,"count":10,"minimumCapacity":1,"tripTypes":["SHARED"],"vehicleTypes":[{"category":"AUTO"}],"dropoffPoint":{"point":{"latitude":37.03,"longitude":-122.0}},"orderBy":"PICKUP_POINT_DISTANCE","currentTripsPresent":"ANY"}"#

    /// Vehicles a and b, 22 m apart in one cell of the approximate grid; b carries the shared trips t1 and t2.
    static func seed(_ client: any TestClientProtocol) async throws {
        for (id, latitude) in [("a", 37.0101), ("b", 37.0099)] {
            let (status, body) = try await client.call(
                .post,
                "\(vehicles)?vehicleId=\(id)",
                token: F.server,
                body: vehicle(latitude: latitude)
            )
            try #require(status == .ok, "\(body.jsonText)")
        }
        for id in ["t1", "t2"] {
            _ = try await client.call(.post, "\(trips)?tripId=\(id)", token: F.server, body: sharedTrip)
            let (assigned, body) = try await client.call(
                .put,
                "\(trips)/\(id)?updateMask=vehicle_id",
                token: F.server,
                body: #"{"vehicleId":"b"}"#
            )
            try #require(assigned == .ok, "\(body.jsonText)")
        }
    }

    static func matches(_ answer: JSONObject) -> [String: JSONObject] {
        var matches: [String: JSONObject] = [:]
        for match in answer["matches"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
            let name = match["vehicle"]?.objectValue?["name"]?.stringValue ?? ""
            matches[String(name.split(separator: "/").last ?? "")] = match
        }
        return matches
    }

    @Test(
        "SearchVehicles answers a consumer approximate vehicles, searched at their approximate positions",
        arguments: FleetStoreDriver.persistent
    )
    func approximateSearch(_ driver: FleetStoreDriver) async throws {
        let (store, _) = try await driver.open()
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: F.accounts),
            store: store
        )
        try await Application(router: router).test(.router) { client in
            try await Self.seed(client)
            // A token for no trip at all, and one for a trip on the vehicle.
            for token in [F.consumer("no-such-trip"), F.consumer("t1")] {
                let (status, answer) = try await client.call(
                    .post,
                    "\(Self.vehicles):search",
                    token: token,
                    body: Self.search
                )
                #expect(status == .ok, "\(answer.jsonText)")
                let matches = Self.matches(answer)
                #expect(Set(matches.keys) == ["a", "b"])
                for (id, match) in matches {
                    let vehicle = try #require(match["vehicle"]?.objectValue)
                    for private_ in ["licensePlate", "attributes", "currentTrips", "waypoints", "waypointsVersion"] {
                        #expect(vehicle[private_] == nil, "\(id) shows \(private_): \(vehicle.jsonText)")
                    }
                    #expect(match["vehicleTripsWaypoints"] == nil, "\(match.jsonText)")
                    let location = vehicle["lastLocation"]?.objectValue
                    #expect(location?["heading"] == nil)
                    #expect(location?["location"]?.objectValue?["latitude"]?.numberValue == 37.01)
                    #expect(vehicle["vehicleType"] == ["category": "AUTO"])
                }
                // Both stand in one cell of the grid: the consumer's distances and ETAs cannot tell them apart.
                for estimate in ["vehiclePickupStraightLineDistanceMeters", "vehiclePickupDistanceMeters"] {
                    #expect(matches["a"]?[estimate] != nil)
                    #expect(matches["a"]?[estimate] == matches["b"]?[estimate], "\(estimate)")
                }
            }
            // A server token sees the vehicles exactly.
            let (_, exact) = try await client.call(.post, "\(Self.vehicles):search", token: F.server, body: Self.search)
            let matches = Self.matches(exact)
            #expect(matches["b"]?["vehicle"]?.objectValue?["licensePlate"] != nil)
            #expect(matches["b"]?["vehicle"]?.objectValue?["currentTrips"] == ["t1", "t2"])
            #expect(
                matches["a"]?["vehiclePickupStraightLineDistanceMeters"]
                    != matches["b"]?["vehiclePickupStraightLineDistanceMeters"]
            )
        }
    }

    @Test("GetTrip shows a rider the shared vehicle's other stops, never which trips they are")
    func sharedTripWithoutOtherRiders() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            try await Self.seed(client)
            // t1 is driven first: t2's remaining waypoints run through t1's pickup and drop-off.
            func tripIDs(_ token: String) async throws -> [String] {
                let (status, trip) = try await client.call(.get, "\(Self.trips)/t2", token: token)
                #expect(status == .ok, "\(trip.jsonText)")
                let waypoints = trip["remainingWaypoints"]?.arrayValue?.compactMap(\.objectValue) ?? []
                #expect(waypoints.count == 4, "both trips' pickups and drop-offs: \(trip.jsonText)")
                #expect(waypoints.allSatisfy { $0["location"] != nil })
                return waypoints.map { $0["tripId"]?.stringValue ?? "" }
            }
            #expect(try await tripIDs(F.consumer("t2")) == ["", "", "t2", "t2"])
            // The driver of the vehicle, and a server, may read both trips: they see whose stop each is.
            #expect(try await tripIDs(F.driver("b")) == ["t1", "t1", "t2", "t2"])
            #expect(try await tripIDs(F.server) == ["t1", "t1", "t2", "t2"])
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("over gRPC too: a consumer's SearchVehicles answers approximate vehicles")
    func approximateSearchOverGRPC() async throws {
        try await GRPCEmulator.with { emulator in
            try await Self.seed(emulator.rest)
            let request = try FleetEngineV1.SearchVehiclesRequest(jsonString: Self.search)
            var named = request
            named.parent = GRPCEmulator.provider
            let answer = try await emulator.vehicles.searchVehicles(named, metadata: bearer(F.consumer("t1")))
            #expect(answer.matches.count == 2)
            for match in answer.matches {
                #expect(!match.vehicle.hasLicensePlate && match.vehicle.attributes.isEmpty)
                #expect(match.vehicle.currentTrips.isEmpty && match.vehicle.waypoints.isEmpty)
                #expect(match.vehicleTripsWaypoints.isEmpty)
                #expect(match.vehicle.lastLocation.location.latitude == 37.01)
            }
            let exact = try await emulator.vehicles.searchVehicles(named, metadata: bearer(F.server))
            #expect(exact.matches.contains { $0.vehicle.hasLicensePlate })
        }
    }
}
