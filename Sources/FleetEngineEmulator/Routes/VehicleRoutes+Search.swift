import FleetAuthCore
import FleetAuthServerSupport
import Foundation
import Hummingbird

extension VehicleRoutes {
    /// UpdateVehicleAttributes: the attributes named in the request replace those with the same key; the others
    /// stay. Answers the vehicle's full attribute list.
    func updateAttributes(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let (_, provider, id) = try authorizedVehicle(context, .updateVehicleAttributes)
        let body = try await reading.body(request, field: "request")
        let schema = MessageSchema(
            name: "UpdateVehicleAttributesRequest",
            fields: ["header": .any, "attributes": .repeated(.message(VehicleSchema.attribute), maximumCount: 100)])
        try schema.validate(body, path: "request")
        try VehicleSchema.validateAttributes(body["attributes"], path: "attributes")
        guard case .array(let changes)? = body["attributes"], !changes.isEmpty else {
            throw FleetEngineError.invalidArgument("attributes must list at least one attribute.")
        }
        let updated = try await store.updateVehicle(provider: provider, id: id) { current in
            var attributes = current["attributes"]?.arrayValue ?? []
            for change in changes {
                let key = change.objectValue?["key"]
                if let index = attributes.firstIndex(where: { $0.objectValue?["key"] == key }) {
                    attributes[index] = change
                } else {
                    attributes.append(change)
                }
            }
            guard attributes.count <= 100 else {
                throw FleetEngineError.invalidArgument("A vehicle has at most 100 attributes.")
            }
            var next = current
            next["attributes"] = .array(attributes)
            return next
        }
        return JSONResponse.make(JSONObject(["attributes": updated.body["attributes"] ?? .array([])]))
    }

    static let searchSchema = MessageSchema(
        name: "SearchVehiclesRequest",
        fields: [
            "header": .any, "pickupPoint": .message(TripSchema.terminalLocation),
            "dropoffPoint": .message(TripSchema.terminalLocation),
            "pickupRadiusMeters": .integer(min: 400, max: 10_000),
            "count": .integer(min: 1, max: 50), "minimumCapacity": .integer(min: 1, max: Int64(Int32.max)),
            "tripTypes": .repeated(.enumeration(VehicleSchema.tripTypes), maximumCount: 1),
            "maximumStaleness": .duration,
            "vehicleTypes": .repeated(
                .message(
                    MessageSchema(name: "VehicleType", fields: ["category": .enumeration(VehicleSchema.categories)])),
                maximumCount: 10),
            "requiredAttributes": .repeated(.message(VehicleSchema.attribute), maximumCount: 50),
            "requiredOneOfAttributes": .repeated(.any, maximumCount: 50),
            "requiredOneOfAttributeSets": .repeated(.any, maximumCount: 50),
            "orderBy": .enumeration([
                "UNKNOWN_VEHICLE_MATCH_ORDER", "PICKUP_POINT_ETA", "PICKUP_POINT_DISTANCE", "DROPOFF_POINT_ETA",
                "PICKUP_POINT_STRAIGHT_DISTANCE", "COST",
            ]),
            "includeBackToBack": .bool, "tripId": .string,
            "currentTripsPresent": .enumeration(["CURRENT_TRIPS_PRESENT_UNSPECIFIED", "NONE", "ANY"]),
            "filter": .string,
        ])

    /// SearchVehicles. Every order is served by straight-line distance from the pickup point: the emulator has
    /// no road network, so ETA-based orders are approximated by distance (documented in the README).
    func search(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let provider = try Self.provider(context)
        // The role is checked before the body is read; the claim once the body names the trip.
        try AccessPolicy.checkRole(account: principal.account, method: .searchVehicles)
        let body = try await reading.body(request, field: "request")
        try Self.searchSchema.validate(body, path: "request")
        for field in [
            "pickupPoint", "pickupRadiusMeters", "count", "minimumCapacity", "tripTypes", "vehicleTypes", "orderBy",
        ]
        where body[field] == nil || body[field] == .null {
            throw FleetEngineError.invalidArgument("\(field) is required.")
        }
        guard body["tripTypes"]?.arrayValue?.count == 1,
            let tripType = body["tripTypes"]?.arrayValue?.first?.stringValue
        else { throw FleetEngineError.invalidArgument("tripTypes must list exactly one trip type.") }
        let categories = Set(
            (body["vehicleTypes"]?.arrayValue ?? []).compactMap { $0.objectValue?["category"]?.stringValue })
        guard !categories.isEmpty, !categories.contains("UNKNOWN") else {
            throw FleetEngineError.invalidArgument("vehicleTypes must list at least one known vehicle type.")
        }
        guard case .object(let point)? = body["pickupPoint"]?.objectValue?["point"],
            let latitude = point["latitude"]?.numberValue, let longitude = point["longitude"]?.numberValue
        else { throw FleetEngineError.invalidArgument("pickupPoint.point is required.") }
        let tripID = try body["tripId"]?.stringValue.map { try RequestReading.id($0, field: "tripId") }
        try AccessPolicy.check(
            account: principal.account, claims: principal.claims, method: .searchVehicles,
            scope: .vehicleSearch(tripID: tripID), provider: provider)

        let radius = Double(body["pickupRadiusMeters"]?.integerValue ?? 0)
        let count = Int(body["count"]?.integerValue ?? 1)
        let minimumCapacity = body["minimumCapacity"]?.integerValue ?? 1
        let staleness = body["maximumStaleness"]?.stringValue.flatMap { Double($0.dropLast()) } ?? 300
        let anyCurrentTrips = body["currentTripsPresent"] == "ANY" || body["includeBackToBack"] == .bool(true)
        let now = clock.currentDate

        var matches: [(distance: Double, vehicle: JSONObject)] = []
        var afterID: String?
        while true {
            let page = try await store.vehicles(provider: provider, afterID: afterID, limit: 500)
            for row in page {
                let vehicle = row.body
                guard vehicle["vehicleState"] == "ONLINE",
                    vehicle["supportedTripTypes"]?.arrayValue?.contains(.string(tripType)) == true,
                    let category = vehicle["vehicleType"]?.objectValue?["category"]?.stringValue,
                    categories.contains(category),
                    let location = vehicle["lastLocation"]?.objectValue,
                    let position = location["location"]?.objectValue,
                    let vehicleLatitude = position["latitude"]?.numberValue,
                    let vehicleLongitude = position["longitude"]?.numberValue
                else { continue }
                let seen = (location["serverTime"]?.stringValue ?? location["updateTime"]?.stringValue).flatMap(
                    RFC3339.parse)
                guard let seen, now.timeIntervalSince(seen) <= staleness else { continue }
                let distance = Self.distance(latitude, longitude, vehicleLatitude, vehicleLongitude)
                guard distance <= radius else { continue }
                let currentTrips = try await fetchActiveTrips(provider: provider, vehicleID: row.id)
                if !anyCurrentTrips, !currentTrips.isEmpty { continue }
                guard Self.availableCapacity(vehicle, currentTrips) >= minimumCapacity else { continue }
                matches.append(
                    (distance, try await render(vehicle, provider: provider, id: row.id, activeTrips: currentTrips)))
            }
            guard page.count == 500, let last = page.last else { break }
            afterID = last.id
        }
        matches.sort { $0.distance < $1.distance }
        let results: [JSONValue] = matches.prefix(count).map { match in
            .object(
                JSONObject([
                    "vehicle": .object(match.vehicle),
                    "vehiclePickupStraightLineDistanceMeters": .integer(Int64(match.distance.rounded())),
                    "vehiclePickupDistanceMeters": .integer(Int64(match.distance.rounded())),
                    "vehicleMatchType": "EXCLUSIVE",
                ]))
        }
        return JSONResponse.make(JSONObject(["matches": .array(results)]))
    }

    /// Great-circle distance in meters (haversine, mean Earth radius).
    static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let a =
            sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 6_371_008.8 * 2 * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}
