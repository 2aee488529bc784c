import FleetAuthCore
import FleetAuthServerSupport
import Foundation
import Hummingbird

/// VehicleService over REST: `/v1/providers/{provider}/vehicles`.
struct VehicleRoutes: Sendable {
    let store: any FleetStore
    let reading: RequestReading
    let clock: any WallClock

    func register(on group: RouterGroup<EmulatorRequestContext>) {
        group.post("vehicles") { request, context in try await create(request, context) }
        group.get("vehicles") { request, context in try await list(request, context) }
        group.get("vehicles/{vehicle}") { request, context in try await get(request, context) }
        group.put("vehicles/{vehicle}") { request, context in try await update(request, context) }
        group.delete("vehicles/{vehicle}") { request, context in try await delete(request, context) }
        group.post("vehicles/{vehicle}:updateAttributes") { request, context in
            try await updateAttributes(request, context)
        }
        group.post("vehicles:search") { request, context in try await search(request, context) }
    }

    /// The caller, provider and vehicle ID of a request on one vehicle, after the access check for `method`.
    func authorizedVehicle(
        _ context: EmulatorRequestContext,
        _ method: FleetEngineMethod
    ) throws(FleetEngineError) -> (principal: Principal, provider: String, id: String) {
        let principal = try context.requirePrincipal()
        let provider = try Self.provider(context)
        let id = try RequestReading.id(context.parameters.get("vehicle"), field: "vehicle ID")
        try AccessPolicy.check(
            account: principal.account, claims: principal.claims, method: method, scope: .vehicle(id),
            provider: provider)
        return (principal, provider, id)
    }

    /// The provider in the path: a valid ID (the access policy then requires the caller's project).
    static func provider(_ context: EmulatorRequestContext) throws(FleetEngineError) -> String {
        try RequestReading.id(context.parameters.get("provider"), field: "provider")
    }

    func create(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let provider = try Self.provider(context)
        let id = try RequestReading.id(request.uri.queryParameters.get("vehicleId"), field: "vehicleId")
        try AccessPolicy.check(
            account: principal.account, claims: principal.claims, method: .createVehicle, scope: .vehicle(id),
            provider: provider)
        let body = try await reading.body(request, field: "vehicle")
        try VehicleSchema.vehicle.validate(body, path: "vehicle")
        try VehicleSchema.validateAttributes(body["attributes"], path: "vehicle.attributes")
        for field in VehicleSchema.requiredOnCreate where body[field] == nil || body[field] == .null {
            throw FleetEngineError.invalidArgument("vehicle.\(field) is required.")
        }
        if case .array(let types)? = body["supportedTripTypes"], types.isEmpty {
            throw FleetEngineError.invalidArgument("vehicle.supportedTripTypes must list at least one trip type.")
        }
        var stored = JSONObject()
        for member in body
        where !VehicleSchema.ignoredOnCreate.contains(member.key) && !VehicleSchema.inputOnly.contains(member.key)
            && member.value != .null
        {
            stored[member.key] = member.value
        }
        if case .object(var location)? = stored["lastLocation"] {
            location["serverTime"] = .string(RFC3339.format(clock.currentDate))
            stored["lastLocation"] = .object(location)
        }
        try await store.insertVehicle(provider: provider, id: id, body: stored)
        return JSONResponse.make(try await render(stored, provider: provider, id: id))
    }

    func get(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let (_, provider, id) = try authorizedVehicle(context, .getVehicle)
        guard let body = try await store.vehicle(provider: provider, id: id) else {
            throw FleetEngineError.notFound("Vehicle providers/\(provider)/vehicles/\(id) not found.")
        }
        return JSONResponse.make(try await render(body, provider: provider, id: id))
    }

    func update(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let provider = try Self.provider(context)
        let id = try RequestReading.id(context.parameters.get("vehicle"), field: "vehicle ID")
        let paths = try RequestReading.updateMask(request.uri.queryParameters.get("updateMask"))
        let fields = try RequestReading.maskFields(
            paths, updatable: VehicleSchema.updatableFields, immutable: VehicleSchema.immutableFields,
            message: "Vehicle")
        // A mask of driver-reportable fields needs only vehicles.updateLocation; anything else vehicles.update.
        let driverOnly = fields.allSatisfy {
            FleetEngineMethod.driverReportableVehicleFields.contains(VehicleSchema.snakeCase($0))
        }
        // (Every role that grants vehicles.update also grants vehicles.updateLocation.)
        let method: FleetEngineMethod = driverOnly ? .updateVehicleLocation : .updateVehicle
        try AccessPolicy.check(
            account: principal.account, claims: principal.claims, method: method, scope: .vehicle(id),
            provider: provider)
        let body = try await reading.body(request, field: "vehicle")
        try VehicleSchema.vehicle.validate(body, path: "vehicle")
        try VehicleSchema.validateAttributes(body["attributes"], path: "vehicle.attributes")
        if fields.contains("maximumCapacity"), body["maximumCapacity"] == nil {
            throw FleetEngineError.invalidArgument("vehicle.maximumCapacity is in the update mask but not set.")
        }
        let serverTime = RFC3339.format(clock.currentDate)
        let maskedFields = fields
        let updated = try await store.updateVehicle(provider: provider, id: id) { current in
            var next = current
            for field in maskedFields {
                let value = body[field]
                if VehicleSchema.inputOnly.contains(field) { continue }
                if let value, value != .null {
                    next[field] = value
                } else {
                    next[field] = nil
                }
            }
            if maskedFields.contains("lastLocation"), case .object(var location)? = next["lastLocation"] {
                location["serverTime"] = .string(serverTime)
                next["lastLocation"] = .object(location)
            }
            return next
        }
        return JSONResponse.make(
            try await render(updated.body, provider: provider, id: id, activeTrips: updated.activeTrips))
    }

    func delete(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let (_, provider, id) = try authorizedVehicle(context, .deleteVehicle)
        try await store.deleteVehicle(provider: provider, id: id)
        return JSONResponse.make(JSONObject())
    }

    func list(_ request: Request, _ context: EmulatorRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let provider = try Self.provider(context)
        try AccessPolicy.check(
            account: principal.account, claims: principal.claims, method: .listVehicles, scope: .allVehicles,
            provider: provider)
        let page = try RequestReading.page(
            size: request.uri.queryParameters.get("pageSize"), token: request.uri.queryParameters.get("pageToken"))
        let rows = try await store.vehicles(provider: provider, afterID: page.afterID, limit: page.size + 1)
        var vehicles: [JSONValue] = []
        for row in rows.prefix(page.size) {
            vehicles.append(.object(try await render(row.body, provider: provider, id: row.id)))
        }
        var response = JSONObject()
        response["vehicles"] = .array(vehicles)
        if rows.count > page.size, let last = rows.prefix(page.size).last {
            response["nextPageToken"] = .string(RequestReading.pageToken(after: last.id))
        }
        return JSONResponse.make(response)
    }

    /// The Vehicle message as returned: stored fields, `name`, `currentTrips` and `availableCapacity`
    /// (`maximumCapacity` less the passengers of its active trips).
    func render(_ body: JSONObject, provider: String, id: String, activeTrips: [StoredTrip]? = nil) async throws
        -> JSONObject
    {
        var vehicle = JSONObject()
        vehicle["name"] = .string("providers/\(provider)/vehicles/\(id)")
        for member in body where !VehicleSchema.outputOnly.contains(member.key) {
            vehicle[member.key] = member.value
        }
        let trips: [StoredTrip]
        if let activeTrips {
            trips = activeTrips
        } else {
            trips = try await fetchActiveTrips(provider: provider, vehicleID: id)
        }
        vehicle["currentTrips"] = .array(trips.map { .string($0.id) })
        vehicle["availableCapacity"] = .integer(Self.availableCapacity(body, trips))
        return vehicle
    }

    /// The active trips assigned to a vehicle.
    func fetchActiveTrips(provider: String, vehicleID: String) async throws -> [StoredTrip] {
        try await store.trips(provider: provider, vehicleID: vehicleID, activeOnly: true, afterID: nil, limit: 1000)
    }

    /// `maximumCapacity` less the passengers (at least one per trip) of the active trips, never below zero.
    static func availableCapacity(_ vehicle: JSONObject, _ activeTrips: [StoredTrip]) -> Int64 {
        let passengers = activeTrips.reduce(Int64(0)) { $0 + max($1.body["numberOfPassengers"]?.integerValue ?? 1, 1) }
        return max((vehicle["maximumCapacity"]?.integerValue ?? 0) - passengers, 0)
    }
}
