import FleetAuthCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Rules Google's published field comments state, checked over REST (the gRPC transport calls the same service
/// methods). Each test names the phrase it follows; the emulator's Deliveries and authorization articles list them.
@Suite("Google's field rules", .temporaryResources)
struct FieldRulesTests {
    typealias F = EmulatorFixture
    typealias D = DeliveryFixture
    static let vehicles = "/v1/providers/demo-project/vehicles"
    static let trips = "/v1/providers/demo-project/trips"
    static let base = "/v1/providers/demo-project"

    // MARK: Deliveries

    /// Creates delivery vehicle van-1 at 51.49, -0.12.
    static func createVan(_ client: any TestClientProtocol) async throws {
        let (created, _) = try await client.call(
            .post,
            "\(base)/deliveryVehicles?deliveryVehicleId=van-1",
            token: D.server,
            body: #"{"lastLocation":{"location":{"latitude":51.49,"longitude":-0.12}}}"#
        )
        try #require(created == .ok)
    }

    @Test(
        "GetTask shares the vehicle's segments without their stops: no planned location, tasks or state",
        arguments: FleetStoreDriver.all
    )
    func getTaskHidesStops(_ driver: FleetStoreDriver) async throws {
        try await D.withEmulator(driver) { client in
            let base = Self.base
            try await Self.createVan(client)
            for (id, latitude) in [("t-other", 51.5), ("t-mine", 51.51)] {
                let (created, _) = try await client.call(
                    .post,
                    "\(base)/tasks?taskId=\(id)",
                    token: D.server,
                    body: D.task("DELIVERY", tracking: "parcel-\(id)", latitude: latitude)
                )
                try #require(created == .ok)
            }
            let (assigned, _) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remainingVehicleJourneySegments",
                token: D.server,
                body: D.stops([["t-other"], ["t-mine"]])
            )
            try #require(assigned == .ok)
            let (status, task) = try await client.call(.get, "\(base)/tasks/t-mine", token: D.server)
            #expect(status == .ok)
            let sharing = try #require(task["journeySharingInfo"]?.objectValue)
            let segments = try #require(sharing["remainingVehicleJourneySegments"]?.arrayValue)
            #expect(segments.count == 2, "the stops up to and including the task's")
            for segment in segments.compactMap({ $0.objectValue }) {
                #expect(segment["stop"] == nil, "\(segment.jsonText)")
                #expect(segment["drivingDistanceMeters"]?.integerValue != nil, "\(segment.jsonText)")
                #expect(segment["drivingDuration"]?.stringValue != nil)
            }
            #expect(!task.jsonText.contains("t-other"), "another customer's task ID leaked: \(task.jsonText)")
            #expect(sharing["lastLocation"]?.objectValue?["location"] == ["latitude": 51.49, "longitude": -0.12])

            // The driver's remaining distance and duration count only with a current route segment; then they are
            // the first shared segment's.
            let remaining = #"{"remainingDistanceMeters":500,"remainingDuration":"70s""#
            let (ignored, vehicle) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remainingDistanceMeters,remainingDuration",
                token: D.server,
                body: remaining + "}"
            )
            #expect(ignored == .ok)
            #expect(vehicle["remainingDistanceMeters"] == nil, "\(vehicle.jsonText)")
            let (reported, _) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remainingDistanceMeters,remainingDuration,currentRouteSegment",
                token: D.server,
                body: remaining + #","currentRouteSegment":"YWJj"}"#
            )
            #expect(reported == .ok)
            let (_, again) = try await client.call(.get, "\(base)/tasks/t-mine", token: D.server)
            let first = again["journeySharingInfo"]?.objectValue?["remainingVehicleJourneySegments"]?.arrayValue?
                .first?.objectValue
            #expect(first?["drivingDistanceMeters"] == 500)
            #expect(first?["drivingDuration"] == "70s")
        }
    }

    @Test(
        "the vehicle's stops carry computed output-only fields; targetTimeWindow only in GetDeliveryVehicle; listing leaves stops out",
        arguments: FleetStoreDriver.all
    )
    func deliveryVehicleOutputOnly(_ driver: FleetStoreDriver) async throws {
        try await D.withEmulator(driver) { client in
            let base = Self.base
            try await Self.createVan(client)
            let window = #","targetTimeWindow":{"startTime":"2030-01-01T10:00:00Z","endTime":"2030-01-01T11:00:00Z"}"#
            let (created, _) = try await client.call(
                .post,
                "\(base)/tasks?taskId=t1",
                token: D.server,
                body: D.task("DELIVERY", tracking: "parcel-1", extra: window)
            )
            try #require(created == .ok)
            // The request's own values for output-only fields (60 s, a made-up distance) are ignored.
            let stops = D.stops([["t1"]]).replacingOccurrences(
                of: #""state":"NEW"}"#,
                with: #""state":"NEW"},"drivingDistanceMeters":7"#
            )
            let (updated, vehicle) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remainingVehicleJourneySegments,currentRouteSegment",
                token: D.server,
                body: String(stops.dropLast()) + #","currentRouteSegment":"YWJj"}"#
            )
            #expect(updated == .ok, "\(vehicle.jsonText)")
            let segment = try #require(vehicle["remainingVehicleJourneySegments"]?.arrayValue?.first?.objectValue)
            let meters = try #require(segment["drivingDistanceMeters"]?.integerValue)
            #expect((1_100...1_125).contains(meters), "0.01° of latitude is about 1,112 m, not the 7 sent")
            #expect(segment["drivingDuration"]?.stringValue != nil)
            #expect(segment["path"]?.arrayValue?.count == 2)
            let info = try #require(segment["stop"]?.objectValue?["tasks"]?.arrayValue?.first?.objectValue)
            #expect(info["taskDuration"] == "120s", "the task's own duration, not the 60 s the request claimed")
            #expect(info["targetTimeWindow"] == nil, "only GetDeliveryVehicle's answer carries the window")

            let (_, got) = try await client.call(.get, "\(base)/deliveryVehicles/van-1", token: D.server)
            let gotInfo = got["remainingVehicleJourneySegments"]?.arrayValue?.first?.objectValue?["stop"]?
                .objectValue?["tasks"]?.arrayValue?.first?.objectValue
            #expect(gotInfo?["targetTimeWindow"]?.objectValue?["startTime"] == "2030-01-01T10:00:00Z")
            #expect(got["currentRouteSegment"] == "YWJj")

            let (listed, page) = try await client.call(.get, "\(base)/deliveryVehicles", token: D.server)
            #expect(listed == .ok)
            let first = try #require(page["deliveryVehicles"]?.arrayValue?.first?.objectValue)
            #expect(first["name"] == "providers/demo-project/deliveryVehicles/van-1")
            #expect(first["remainingVehicleJourneySegments"] == nil)
            #expect(first["currentRouteSegment"] == nil)
        }
    }

    @Test(
        "tracking counts the durations of the tasks at earlier stops, though the driver's stops carry none",
        arguments: FleetStoreDriver.all
    )
    func trackingCountsEarlierTaskDurations(_ driver: FleetStoreDriver) async throws {
        let (store, _) = try await driver.open()
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down))
        let clock = ManualClock(date: start)
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: D.accounts),
            store: store,
            clock: clock
        )
        try await Application(router: router).test(.router) { client in
            try await Self.createVan(client)
            for (id, latitude) in [("t-first", 51.5), ("t-second", 51.51)] {
                let (created, _) = try await client.call(
                    .post,
                    "\(Self.base)/tasks?taskId=\(id)",
                    token: D.server,
                    body: D.task("DELIVERY", tracking: "parcel-\(id)", latitude: latitude)
                )
                try #require(created == .ok)
            }
            // As Google's Driver SDK sends them: stops with task IDs only.
            let segments = [("t-first", 51.5), ("t-second", 51.51)].map { id, latitude in
                #"{"stop":{"plannedLocation":{"point":{"latitude":\#(latitude),"longitude":-0.12}},"tasks":[{"taskId":"\#(id)"}],"state":"NEW"}}"#
            }
            let (assigned, _) = try await client.call(
                .patch,
                "\(Self.base)/deliveryVehicles/van-1?updateMask=remainingVehicleJourneySegments",
                token: D.server,
                body: #"{"remainingVehicleJourneySegments":[\#(segments.joined(separator: ","))]}"#
            )
            try #require(assigned == .ok)
            let (status, info) = try await client.call(
                .get,
                "\(Self.base)/taskTrackingInfo/parcel-t-second",
                token: D.consumer(tracking: "parcel-t-second")
            )
            #expect(status == .ok)
            let text = try #require(info["estimatedArrivalTime"]?.stringValue)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let arrival = try #require(formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text))
            // 2,224 m in straight lines at 10 m/s (222 s) plus the first stop's task, 120 s.
            let seconds = arrival.timeIntervalSince(start)
            #expect((340...345).contains(seconds), "\(seconds) s: \(info.jsonText)")
        }
    }

    @Test(
        "a delivery vehicle created without type is AUTO; taskDuration is immutable; always and never cannot be false",
        arguments: FleetStoreDriver.all
    )
    func deliveryDefaultsAndImmutables(_ driver: FleetStoreDriver) async throws {
        try await D.withEmulator(driver) { client in
            let base = Self.base
            let (created, vehicle) = try await client.call(
                .post,
                "\(base)/deliveryVehicles?deliveryVehicleId=van-1",
                token: D.server,
                body: "{}"
            )
            #expect(created == .ok)
            #expect(vehicle["type"] == "AUTO")
            let (_, got) = try await client.call(.get, "\(base)/deliveryVehicles/van-1", token: D.server)
            #expect(got["type"] == "AUTO")

            _ = try await client.call(
                .post,
                "\(base)/tasks?taskId=t1",
                token: D.server,
                body: D.task("DELIVERY", tracking: "parcel-1")
            )
            let (refused, error) = try await client.call(
                .patch,
                "\(base)/tasks/t1?updateMask=taskDuration",
                token: D.server,
                body: #"{"taskDuration":"999s"}"#
            )
            #expect(refused == .badRequest)
            #expect(error["error"]?.objectValue?["status"] == "INVALID_ARGUMENT")
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("taskDuration") == true)
            let (_, task) = try await client.call(.get, "\(base)/tasks/t1", token: D.server)
            #expect(task["taskDuration"] == "120s")

            // A view config's `always` and `never` cannot be false, on create or update.
            let falseNever = #","taskTrackingViewConfig":{"vehicleLocationVisibility":{"never":false}}"#
            let (createdFalse, refusal) = try await client.call(
                .post,
                "\(base)/tasks?taskId=t2",
                token: D.server,
                body: D.task("DELIVERY", tracking: "parcel-2", extra: falseNever)
            )
            #expect(createdFalse == .badRequest)
            #expect(
                refusal["error"]?.objectValue?["message"]?.stringValue?.contains("vehicleLocationVisibility") == true
            )
            let (updated, _) = try await client.call(
                .patch,
                "\(base)/tasks/t1?updateMask=taskTrackingViewConfig",
                token: D.server,
                body: #"{"taskTrackingViewConfig":{"routePolylinePointsVisibility":{"always":false}}}"#
            )
            #expect(updated == .badRequest)
            let (allowed, _) = try await client.call(
                .patch,
                "\(base)/tasks/t1?updateMask=taskTrackingViewConfig",
                token: D.server,
                body: #"{"taskTrackingViewConfig":{"routePolylinePointsVisibility":{"always":true}}}"#
            )
            #expect(allowed == .ok)
        }
    }

    // MARK: On-demand

    static let vehicleBody =
        #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE","SHARED"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"},"lastLocation":{"location":{"latitude":37.39,"longitude":-122.1}}}"#
    static let tripBody =
        #"{"tripType":"EXCLUSIVE","vehicleId":"v1","pickupPoint":{"point":{"latitude":37.4,"longitude":-122.1}},"dropoffPoint":{"point":{"latitude":37.5,"longitude":-122.2}}}"#

    @Test(
        "SearchTrips without vehicleId leaves out currentRouteSegment, remainingWaypoints, remainingDistanceMeters and etaToFirstWaypoint"
    )
    func searchTripsWithoutVehicle() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            _ = try await client.call(.post, "\(Self.vehicles)?vehicleId=v1", token: F.server, body: Self.vehicleBody)
            let (created, _) = try await client.call(
                .post,
                "\(Self.trips)?tripId=t1",
                token: F.server,
                body: Self.tripBody
            )
            try #require(created == .ok)
            let (_, named) = try await client.call(
                .post,
                "\(Self.trips):search",
                token: F.server,
                body: #"{"vehicleId":"v1"}"#
            )
            let withVehicle = try #require(named["trips"]?.arrayValue?.first?.objectValue)
            #expect(withVehicle["remainingWaypoints"] != nil)
            #expect(withVehicle["etaToFirstWaypoint"] != nil)
            #expect(withVehicle["remainingDistanceMeters"] != nil)
            let (status, all) = try await client.call(.post, "\(Self.trips):search", token: F.server, body: "{}")
            #expect(status == .ok)
            let trip = try #require(all["trips"]?.arrayValue?.first?.objectValue)
            #expect(trip["name"] == "providers/demo-project/trips/t1")
            for field in ["currentRouteSegment", "remainingWaypoints", "remainingDistanceMeters", "etaToFirstWaypoint"]
            {
                #expect(trip[field] == nil, "\(field) in \(trip.jsonText)")
            }
        }
    }

    @Test(
        "GetTrip: remainingWaypointsVersion is deprecated and filters nothing; remainingWaypointsRouteVersion drops path and traffic; route is filled"
    )
    func getTripVersions() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            _ = try await client.call(.post, "\(Self.vehicles)?vehicleId=v1", token: F.server, body: Self.vehicleBody)
            _ = try await client.call(.post, "\(Self.trips)?tripId=t1", token: F.server, body: Self.tripBody)
            let later = "2100-01-01T00:00:00Z"
            let (_, plain) = try await client.call(.get, "\(Self.trips)/t1", token: F.server)
            #expect(plain["route"]?.arrayValue?.count == 2, "the route to the first remaining waypoint")
            let (_, deprecated) = try await client.call(
                .get,
                "\(Self.trips)/t1?remainingWaypointsVersion=\(later)",
                token: F.server
            )
            #expect(deprecated["remainingWaypoints"]?.arrayValue?.isEmpty == false)
            let (_, unchanged) = try await client.call(
                .get,
                "\(Self.trips)/t1?remainingWaypointsRouteVersion=\(later)",
                token: F.server
            )
            let waypoints = (unchanged["remainingWaypoints"]?.arrayValue ?? []).compactMap(\.objectValue)
            #expect(!waypoints.isEmpty)
            #expect(waypoints.allSatisfy { $0["pathToWaypoint"] == nil && $0["location"] != nil })
            let (_, changed) = try await client.call(
                .get,
                "\(Self.trips)/t1?remainingWaypointsRouteVersion=2000-01-01T00:00:00Z",
                token: F.server
            )
            #expect(changed["remainingWaypoints"]?.arrayValue?.first?.objectValue?["pathToWaypoint"] != nil)
            let (_, encoded) = try await client.call(
                .get,
                "\(Self.trips)/t1?routeFormatType=ENCODED_POLYLINE_TYPE",
                token: F.server
            )
            #expect(encoded["route"] == nil)
        }
    }

    @Test("only EXCLUSIVE trips take intermediateDestinations, on create and on update")
    func sharedTripsHaveNoIntermediateDestinations() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            let stop = #","intermediateDestinations":[{"point":{"latitude":37.45,"longitude":-122.15}}]}"#
            let shared = Self.tripBody.replacingOccurrences(of: "EXCLUSIVE", with: "SHARED")
                .replacingOccurrences(of: #""vehicleId":"v1","#, with: "")
            let (refused, error) = try await client.call(
                .post,
                "\(Self.trips)?tripId=t1",
                token: F.server,
                body: String(shared.dropLast()) + stop
            )
            #expect(refused == .badRequest)
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("intermediateDestinations") == true)
            let exclusive = Self.tripBody.replacingOccurrences(of: #""vehicleId":"v1","#, with: "")
            let (created, _) = try await client.call(
                .post,
                "\(Self.trips)?tripId=t2",
                token: F.server,
                body: String(exclusive.dropLast()) + stop
            )
            #expect(created == .ok)
            // A choice (Google's guides are silent; the field is annotated Immutable): the passenger count is fixed.
            let (passengers, refusal) = try await client.call(
                .put,
                "\(Self.trips)/t2?updateMask=numberOfPassengers",
                token: F.server,
                body: #"{"numberOfPassengers":3}"#
            )
            #expect(passengers == .badRequest)
            #expect(refusal["error"]?.objectValue?["message"]?.stringValue?.contains("numberOfPassengers") == true)
            #expect(refusal["error"]?.objectValue?["message"]?.stringValue?.hasSuffix("(immutable).") == true)
            let (switched, _) = try await client.call(
                .put,
                "\(Self.trips)/t2?updateMask=tripType",
                token: F.server,
                body: #"{"tripType":"SHARED"}"#
            )
            #expect(switched == .badRequest)
            let (_, kept) = try await client.call(.get, "\(Self.trips)/t2", token: F.server)
            #expect(kept["tripType"] == "EXCLUSIVE")
        }
    }

    @Test("SearchVehicles: SHARED needs currentTripsPresent; filter excludes the required-attribute fields")
    func searchRules() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            let search =
                #"{"pickupPoint":{"point":{"latitude":37.4,"longitude":-122.1}},"dropoffPoint":{"point":{"latitude":37.5,"longitude":-122.2}},"pickupRadiusMeters":5000,"count":10,"minimumCapacity":1,"vehicleTypes":[{"category":"AUTO"}],"orderBy":"PICKUP_POINT_ETA""#
            let (shared, error) = try await client.call(
                .post,
                "\(Self.vehicles):search",
                token: F.server,
                body: search + #","tripTypes":["SHARED"]}"#
            )
            #expect(shared == .badRequest)
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("currentTripsPresent") == true)
            let (sharedAny, _) = try await client.call(
                .post,
                "\(Self.vehicles):search",
                token: F.server,
                body: search + #","tripTypes":["SHARED"],"currentTripsPresent":"ANY"}"#
            )
            #expect(sharedAny == .ok)
            let (both, bothError) = try await client.call(
                .post,
                "\(Self.vehicles):search",
                token: F.server,
                body: search
                    + #","tripTypes":["EXCLUSIVE"],"filter":"attributes.a = \"b\"","requiredAttributes":[{"key":"c","value":"d"}]}"#
            )
            #expect(both == .badRequest)
            #expect(bothError["error"]?.objectValue?["message"]?.stringValue?.contains("filter") == true)
            let (listed, listError) = try await client.call(
                .get,
                "\(Self.vehicles)?\(F.autos)&filter=attributes.a%20%3D%20%22b%22&requiredAttributes=c:d",
                token: F.server
            )
            #expect(listed == .badRequest, "\(listError.jsonText)")
            let (filterOnly, _) = try await client.call(
                .get,
                "\(Self.vehicles)?\(F.autos)&filter=attributes.a%20%3D%20%22b%22",
                token: F.server
            )
            #expect(filterOnly == .ok)
        }
    }

    @Test(
        "FLEET_ENGINE_LOCATION is refused; the end point needs its route segment; UNKNOWN categories and >50 relatedIds are refused"
    )
    func requestLimits() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            _ = try await client.call(.post, "\(Self.vehicles)?vehicleId=v1", token: F.server, body: Self.vehicleBody)
            let (sensor, error) = try await client.call(
                .put,
                "\(Self.vehicles)/v1?updateMask=lastLocation",
                token: F.driver("v1"),
                body:
                    #"{"lastLocation":{"location":{"latitude":37.4,"longitude":-122.1},"locationSensor":"FLEET_ENGINE_LOCATION"}}"#
            )
            #expect(sensor == .badRequest)
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("locationSensor") == true)
            // The route segment's end point counts only with the segment in the same request.
            let endPoint = #""currentRouteSegmentEndPoint":{"location":{"point":{"latitude":37.5,"longitude":-122.2}}}"#
            let (alone, ignored) = try await client.call(
                .put,
                "\(Self.vehicles)/v1?updateMask=currentRouteSegmentEndPoint",
                token: F.driver("v1"),
                body: "{\(endPoint)}"
            )
            #expect(alone == .ok)
            #expect(ignored["currentRouteSegmentEndPoint"] == nil, "\(ignored.jsonText)")
            let (both, kept) = try await client.call(
                .put,
                "\(Self.vehicles)/v1?updateMask=currentRouteSegmentEndPoint,currentRouteSegment",
                token: F.driver("v1"),
                body: #"{"currentRouteSegment":"abc","# + endPoint + "}"
            )
            #expect(both == .ok)
            #expect(kept["currentRouteSegmentEndPoint"] != nil, "\(kept.jsonText)")
            let (available, _) = try await client.call(
                .put,
                "\(Self.vehicles)/v1?updateMask=availableCapacity",
                token: F.server,
                body: #"{"availableCapacity":3}"#
            )
            #expect(available == .badRequest)
            let (gps, _) = try await client.call(
                .put,
                "\(Self.vehicles)/v1?updateMask=lastLocation",
                token: F.driver("v1"),
                body: #"{"lastLocation":{"location":{"latitude":37.4,"longitude":-122.1},"locationSensor":"GPS"}}"#
            )
            #expect(gps == .ok)
            let (unknown, _) = try await client.call(
                .get,
                "\(Self.vehicles)?vehicleTypeCategories=UNKNOWN",
                token: F.server
            )
            #expect(unknown == .badRequest)
            let (auto, _) = try await client.call(.get, "\(Self.vehicles)?vehicleTypeCategories=AUTO", token: F.server)
            #expect(auto == .ok)
            func report(_ count: Int) async throws -> HTTPResponse.Status {
                let ids = (0..<count).map { "\"r\($0)\"" }.joined(separator: ",")
                return try await client.call(
                    .post,
                    "/v1/providers/demo-project/billableTrips/t1:report",
                    token: F.server,
                    body: #"{"countryCode":"US","relatedIds":[\#(ids)]}"#
                ).0
            }
            #expect(try await report(50) == .ok)
            #expect(try await report(51) == .badRequest)
        }
    }

    @Test("a delivery vehicle's location may not claim Fleet Engine as its sensor", arguments: FleetStoreDriver.all)
    func deliverySensor(_ driver: FleetStoreDriver) async throws {
        try await D.withEmulator(driver) { client in
            try await Self.createVan(client)
            let (status, error) = try await client.call(
                .patch,
                "\(Self.base)/deliveryVehicles/van-1?updateMask=lastLocation",
                token: D.untrusted("van-1"),
                body:
                    #"{"lastLocation":{"location":{"latitude":51.4,"longitude":-0.1},"rawLocationSensor":"FLEET_ENGINE_LOCATION"}}"#
            )
            #expect(status == .badRequest)
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("rawLocationSensor") == true)
        }
    }
}
