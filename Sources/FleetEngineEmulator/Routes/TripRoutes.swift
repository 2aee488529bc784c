import FleetAuthCore
import FleetAuthServerSupport
import Foundation
import Hummingbird

/// TripService over REST: `/v1/providers/{provider}/trips`.
///
/// A trip's `vehicleId` is the one source of truth for assignment: a vehicle's `currentTrips` is derived from the
/// active trips that name it, and a driver token (`vehicleid` claim) may act on a trip only while it is assigned
/// to that vehicle.
struct TripRoutes: Sendable {
    let store: any FleetStore
    let reading: RequestReading

    func register(on group: RouterGroup<EmulatorRequestContext>) {
        group.post("trips") { request, context in try await create(request, context) }
        group.post("trips:search") { request, context in try await search(request, context) }
        group.get("trips/{trip}") { request, context in try await get(request, context) }
        group.put("trips/{trip}") { request, context in try await update(request, context) }
        group.delete("trips/{trip}") { request, context in try await delete(request, context) }
    }

    func create(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let provider = try VehicleRoutes.provider(context)
        let id = try RequestReading.id(request.uri.queryParameters.get("tripId"), field: "tripId")
        try AccessPolicy.check(
            account: principal.account, claims: principal.claims, method: .createTrip,
            scope: .trip(id, assignedVehicleID: nil), provider: provider)
        let body = try await reading.body(request, field: "trip")
        try TripSchema.trip.validate(body, path: "trip")
        for field in TripSchema.requiredOnCreate where body[field] == nil || body[field] == .null {
            throw FleetEngineError.invalidArgument("trip.\(field) is required.")
        }
        var stored = JSONObject()
        for member in body where TripSchema.usedOnCreate.contains(member.key) && member.value != .null {
            stored[member.key] = member.value
        }
        stored["tripStatus"] = "NEW"
        let vehicleID = try await assignedVehicle(stored["vehicleId"], provider: provider)
        let trip = StoredTrip(id: id, body: stored, vehicleID: vehicleID, isActive: true)
        try await store.insertTrip(provider: provider, id: id, trip: trip)
        return JSONResponse.make(try await render(trip, provider: provider))
    }

    /// The vehicle a `vehicleId` value names, which must exist.
    func assignedVehicle(_ value: JSONValue?, provider: String) async throws -> String? {
        guard case .string(let vehicleID)? = value, !vehicleID.isEmpty else { return nil }
        let id = try RequestReading.id(vehicleID, field: "trip.vehicleId")
        guard try await store.vehicle(provider: provider, id: id) != nil else {
            throw FleetEngineError.notFound("Vehicle providers/\(provider)/vehicles/\(id) not found.")
        }
        return id
    }

    /// Reads a trip and checks access to it (authorization needs the trip's assigned vehicle).
    func authorizedTrip(
        _ context: EmulatorRequestContext,
        method: FleetEngineMethod
    ) async throws -> (Principal, String, StoredTrip) {
        let principal = try context.requirePrincipal()
        let provider = try VehicleRoutes.provider(context)
        let id = try RequestReading.id(context.parameters.get("trip"), field: "trip ID")
        // Fail on the role before looking anything up.
        try AccessPolicy.checkRole(account: principal.account, method: method)
        let trip = try await store.trip(provider: provider, id: id)
        try AccessPolicy.check(
            account: principal.account, claims: principal.claims, method: method,
            scope: .trip(id, assignedVehicleID: trip?.vehicleID), provider: provider)
        guard let trip else { throw FleetEngineError.notFound("Trip providers/\(provider)/trips/\(id) not found.") }
        return (principal, provider, trip)
    }

    func get(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        if let view = request.uri.queryParameters.get("view") {
            try MessageSchema.validate(.string(String(view)), as: .enumeration(TripSchema.views), path: "view")
        }
        let (_, provider, trip) = try await authorizedTrip(context, method: .getTrip)
        return JSONResponse.make(try await render(trip, provider: provider))
    }

    func update(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let paths = try RequestReading.updateMask(request.uri.queryParameters.get("updateMask"))
        let fields = try RequestReading.maskFields(
            paths, updatable: TripSchema.updatableFields, immutable: TripSchema.immutableFields, message: "Trip")
        let method: FleetEngineMethod = fields.contains("tripStatus") ? .updateTripState : .updateTrip
        let (principal, provider, current) = try await authorizedTrip(context, method: method)
        if method == .updateTripState {
            // Changing the status also needs trips.update.
            try AccessPolicy.check(
                account: principal.account, claims: principal.claims, method: .updateTrip,
                scope: .trip(current.id, assignedVehicleID: current.vehicleID), provider: provider)
        }
        let body = try await reading.body(request, field: "trip")
        try TripSchema.trip.validate(body, path: "trip")
        var newVehicleID = current.vehicleID
        if fields.contains("vehicleId") {
            newVehicleID = try await assignedVehicle(body["vehicleId"], provider: provider)
            // A driver may not hand its trip to another vehicle.
            if let claim = principal.claims.vehicleID, claim != FleetEngineID.wildcard,
                let target = newVehicleID, !target.hasSameBytes(as: claim)
            {
                throw FleetEngineError.permissionDenied(
                    "The token's authorization claims do not cover vehicle \(target)")
            }
        }
        if fields.contains("tripStatus") {
            guard case .string(let status)? = body["tripStatus"], status != "UNKNOWN_TRIP_STATUS" else {
                throw FleetEngineError.invalidArgument("trip.tripStatus must be set to a known status.")
            }
        }
        let maskedFields = fields
        let assigned = newVehicleID
        let updated = try await store.updateTrip(provider: provider, id: current.id) { trip in
            if TripSchema.terminalStatuses.contains(trip.body["tripStatus"]?.stringValue ?? "") {
                throw FleetEngineError.failedPrecondition(
                    "Trip providers/\(provider)/trips/\(trip.id) is \(trip.body["tripStatus"]?.stringValue ?? ""); it cannot change any more."
                )
            }
            var next = trip
            for field in maskedFields {
                if let value = body[field], value != .null {
                    next.body[field] = value
                } else {
                    next.body[field] = nil
                }
            }
            if maskedFields.contains("vehicleId") { next.vehicleID = assigned }
            next.isActive = TripSchema.isActive(next.body["tripStatus"]?.stringValue)
            return next
        }
        return JSONResponse.make(try await render(updated, provider: provider))
    }

    func delete(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let (_, provider, trip) = try await authorizedTrip(context, method: .deleteTrip)
        if trip.isActive, trip.vehicleID != nil {
            throw FleetEngineError.failedPrecondition(
                "Trip providers/\(provider)/trips/\(trip.id) is active and assigned to a vehicle; complete or cancel it first."
            )
        }
        try await store.deleteTrip(provider: provider, id: trip.id)
        return JSONResponse.make(JSONObject())
    }

    func search(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let provider = try VehicleRoutes.provider(context)
        let body = try await reading.body(request, field: "request")
        let schema = MessageSchema(
            name: "SearchTripsRequest",
            fields: [
                "header": .any, "vehicleId": .string, "activeTripsOnly": .bool,
                "pageSize": .integer(min: 0, max: Int64(Int32.max)), "pageToken": .string,
                "minimumStaleness": .duration,
            ])
        try schema.validate(body, path: "request")
        guard case .string(let vehicleID)? = body["vehicleId"] else {
            throw FleetEngineError.invalidArgument("vehicleId is required.")
        }
        let id = try RequestReading.id(vehicleID, field: "vehicleId")
        try AccessPolicy.check(
            account: principal.account, claims: principal.claims, method: .searchTrips,
            scope: .tripSearch(vehicleID: id), provider: provider)
        let page = try RequestReading.page(
            size: body["pageSize"]?.integerValue.map(String.init), token: body["pageToken"]?.stringValue)
        let activeOnly = body["activeTripsOnly"] == .bool(true)
        let trips = try await store.trips(
            provider: provider, vehicleID: id, activeOnly: activeOnly, afterID: page.afterID, limit: page.size + 1)
        var rendered: [JSONValue] = []
        for trip in trips.prefix(page.size) {
            rendered.append(.object(try await render(trip, provider: provider)))
        }
        var response = JSONObject()
        response["trips"] = .array(rendered)
        if trips.count > page.size, let last = trips.prefix(page.size).last {
            response["nextPageToken"] = .string(RequestReading.pageToken(after: last.id))
        }
        return JSONResponse.make(response)
    }

    /// The Trip message as returned: stored fields, `name`, and while active on a vehicle, the vehicle's
    /// `lastLocation` and the `remainingWaypoints` of this trip.
    func render(_ trip: StoredTrip, provider: String) async throws -> JSONObject {
        var object = JSONObject()
        object["name"] = .string("providers/\(provider)/trips/\(trip.id)")
        for member in trip.body { object[member.key] = member.value }
        if trip.isActive, let vehicleID = trip.vehicleID {
            let location = try await store.vehicle(provider: provider, id: vehicleID)?["lastLocation"]
            if let location { object["lastLocation"] = location }
            object["remainingWaypoints"] = .array(
                Self.remainingWaypoints(trip, from: location?.objectValue?["location"]?.objectValue))
        }
        return object
    }

    /// The waypoints this trip still has to visit, given its status: pickup, the intermediate destinations from
    /// `intermediateDestinationIndex`, and drop-off. `distanceMeters` is the straight-line distance along them from
    /// the vehicle's last location (the emulator has no road network), present when that location is known.
    static func remainingWaypoints(_ trip: StoredTrip, from position: JSONObject?) -> [JSONValue] {
        let intermediates = trip.body["intermediateDestinations"]?.arrayValue ?? []
        let index = Int(max(trip.body["intermediateDestinationIndex"]?.integerValue ?? 0, 0))
        var stops: [(JSONValue?, String)] = []
        switch trip.body["tripStatus"]?.stringValue ?? "NEW" {
        case "ENROUTE_TO_DROPOFF":
            break
        case "ENROUTE_TO_INTERMEDIATE_DESTINATION", "ARRIVED_AT_INTERMEDIATE_DESTINATION":
            stops += intermediates.dropFirst(index).map { ($0, "INTERMEDIATE_DESTINATION_WAYPOINT_TYPE") }
        default:
            stops.append((trip.body["pickupPoint"], "PICKUP_WAYPOINT_TYPE"))
            stops += intermediates.map { ($0, "INTERMEDIATE_DESTINATION_WAYPOINT_TYPE") }
        }
        stops.append((trip.body["dropoffPoint"], "DROP_OFF_WAYPOINT_TYPE"))
        var previous = position.flatMap(Self.coordinates)
        var distance = 0.0
        var waypoints: [JSONValue] = []
        for case (.object(let location)?, let type) in stops {
            var waypoint: JSONObject = ["location": .object(location), "tripId": .string(trip.id)]
            waypoint["waypointType"] = .string(type)
            let point = location["point"]?.objectValue.flatMap(Self.coordinates)
            if position != nil, let from = previous, let point {
                distance += VehicleRoutes.distance(from.0, from.1, point.0, point.1)
                waypoint["distanceMeters"] = .integer(Int64(distance.rounded()))
            }
            previous = point
            waypoints.append(.object(waypoint))
        }
        return waypoints
    }

    private static func coordinates(_ point: JSONObject) -> (Double, Double)? {
        guard let latitude = point["latitude"]?.numberValue,
            let longitude = point["longitude"]?.numberValue
        else { return nil }
        return (latitude, longitude)
    }
}
