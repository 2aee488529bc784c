import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import SwiftProtobuf

extension OnDemandService {
    /// CreateVehicle: `vehicleState`, `supportedTripTypes`, `maximumCapacity` and `vehicleType` are required;
    /// fields the server manages or derives are ignored, input-only ones are read and not kept.
    public func createVehicle(_ request: FleetEngineV1.CreateVehicleRequest, caller: Principal) async throws
        -> FleetEngineV1.Vehicle
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        let id = try ResourceName.id(request.vehicleID, field: "vehicleId")
        try AccessPolicy.check(caller, .createVehicle, .vehicle(id), provider: provider)
        var vehicle = request.vehicle
        try MessageChecks.vehicle(vehicle)
        guard vehicle.vehicleState != .unknownVehicleState else {
            throw GoogleAPIError.invalidArgument("vehicle.vehicleState is required.")
        }
        guard !vehicle.supportedTripTypes.isEmpty else {
            throw GoogleAPIError.invalidArgument("vehicle.supportedTripTypes must list at least one trip type.")
        }
        guard vehicle.maximumCapacity >= 1 else {
            throw GoogleAPIError.invalidArgument("vehicle.maximumCapacity is required (at least 1).")
        }
        vehicle.attributes = try Attributes.normalized(vehicle.attributes, field: "vehicle.attributes")
        // Ignored on create (the server manages or derives them), and input only (read, not kept).
        vehicle.name = ""
        vehicle.currentTrips = []
        vehicle.currentRouteSegment = ""
        vehicle.clearCurrentRouteSegmentEndPoint()
        vehicle.clearCurrentRouteSegmentVersion()
        vehicle.clearCurrentRouteSegmentTraffic()
        vehicle.route = []
        vehicle.waypoints = []
        vehicle.clearWaypointsVersion()
        vehicle.clearRemainingDistanceMeters()
        vehicle.clearRemainingTimeSeconds()
        vehicle.clearEtaToFirstWaypoint()
        vehicle.navigationStatus = .unknownNavigationStatus
        vehicle.pastLocations = []
        vehicle.clearDeviceSettings()
        if vehicle.hasLastLocation { vehicle.lastLocation.serverTime = Google_Protobuf_Timestamp(milliseconds: now) }
        try await store.insertVehicle(vehicle, provider: provider, id: id)
        return render(vehicle, provider: provider, id: id, activeTrips: [])
    }

    /// GetVehicle. `currentRouteSegmentVersion` and `waypointsVersion` leave out what has not changed since.
    public func getVehicle(_ request: FleetEngineV1.GetVehicleRequest, caller: Principal) async throws
        -> FleetEngineV1.Vehicle
    {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.vehicle(request.name)
        try AccessPolicy.check(caller, .getVehicle, .vehicle(id), provider: provider)
        guard let (stored, trips) = try await store.vehicleWithActiveTrips(provider: provider, id: id) else {
            throw GoogleAPIError.notFound("Vehicle \(request.name) not found.")
        }
        var vehicle = render(stored, provider: provider, id: id, activeTrips: trips)
        if request.hasCurrentRouteSegmentVersion, vehicle.hasCurrentRouteSegmentVersion,
            vehicle.currentRouteSegmentVersion.date <= request.currentRouteSegmentVersion.date
        {
            vehicle.currentRouteSegment = ""
        }
        if request.hasWaypointsVersion, vehicle.hasWaypointsVersion,
            vehicle.waypointsVersion.date <= request.waypointsVersion.date
        {
            vehicle.waypoints = []
        }
        return vehicle
    }

    /// UpdateVehicle: writes the fields the mask names. A mask of fields a driver reports needs only
    /// `vehicles.updateLocation`; any other field `vehicles.update`. `remainingTimeSeconds` sets the ETA to the
    /// first waypoint; `waypoints` may only reorder the vehicle's current waypoints.
    public func updateVehicle(_ request: FleetEngineV1.UpdateVehicleRequest, caller: Principal) async throws
        -> FleetEngineV1.Vehicle
    {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.vehicle(request.name)
        let paths = try FieldMasks.paths(request.updateMask.paths, updating: FieldMasks.vehicle)
        // Every role that grants vehicles.update also grants vehicles.updateLocation.
        let driverOnly = paths.allSatisfy(FleetEngineMethod.driverReportableVehicleFields.contains)
        try AccessPolicy.check(
            caller,
            driverOnly ? .updateVehicleLocation : .updateVehicle,
            .vehicle(id),
            provider: provider
        )
        var source = request.vehicle
        try MessageChecks.vehicle(source)
        if paths.contains("vehicle_state"), source.vehicleState == .unknownVehicleState {
            throw GoogleAPIError.invalidArgument("vehicle.vehicleState must be ONLINE or OFFLINE.")
        }
        if paths.contains("supported_trip_types"), source.supportedTripTypes.isEmpty {
            throw GoogleAPIError.invalidArgument("vehicle.supportedTripTypes must list at least one trip type.")
        }
        if paths.contains("maximum_capacity"), source.maximumCapacity < 1 {
            throw GoogleAPIError.invalidArgument(
                "vehicle.maximumCapacity is in the update mask and must be at least 1."
            )
        }
        if paths.contains("vehicle_type"), !source.hasVehicleType {
            throw GoogleAPIError.invalidArgument("vehicle.vehicleType is in the update mask but not set.")
        }
        source.attributes = try Attributes.normalized(source.attributes, field: "vehicle.attributes")
        let given = source
        let now = self.now
        let updated = try await store.updateVehicle(provider: provider, id: id) { current, trips in
            var next = current
            for path in paths {
                if path == "waypoints" { try Self.checkReorder(given.waypoints, of: trips, field: "vehicle.waypoints") }
                // Google: the end point "is ignored in UpdateVehicle calls unless current_route_segment is also
                // specified".
                if path == "current_route_segment_end_point", !paths.contains("current_route_segment") { continue }
                next.replaceField(path, from: given)
            }
            if paths.contains("last_location"), next.hasLastLocation {
                next.lastLocation.serverTime = Google_Protobuf_Timestamp(milliseconds: now)
            }
            if paths.contains("current_route_segment"), next.currentRouteSegment != current.currentRouteSegment {
                next.currentRouteSegmentVersion = Google_Protobuf_Timestamp(milliseconds: now)
            }
            if next.hasRemainingTimeSeconds {
                // Input only: the driver's time to its next waypoint sets the ETA, and is not kept.
                next.etaToFirstWaypoint = Google_Protobuf_Timestamp(
                    milliseconds: now.addingTimeInterval(TimeInterval(next.remainingTimeSeconds.value))
                )
                next.clearRemainingTimeSeconds()
            }
            next.pastLocations = []
            next.clearDeviceSettings()
            next.clearCurrentRouteSegmentTraffic()
            return next
        }
        return render(updated.vehicle, provider: provider, id: id, activeTrips: updated.activeTrips)
    }

    /// A new order of a vehicle's waypoints must list exactly its current waypoints.
    static func checkReorder(_ waypoints: [FleetEngineV1.TripWaypoint], of trips: [StoredTrip], field: String)
        throws(GoogleAPIError)
    {
        let current = trips.flatMap(RouteEstimator.remainingStops).map { "\($0.type.rawValue)/\($0.tripID)" }
        let given = waypoints.map { "\($0.waypointType.rawValue)/\($0.tripID)" }
        guard current.sorted() == given.sorted() else {
            throw .invalidArgument(
                "\(field) must contain all the waypoints currently on the vehicle, and no other waypoints."
            )
        }
    }

    /// UpdateVehicleAttributes: the attributes named replace those with the same key; the others stay.
    public func updateVehicleAttributes(
        _ request: FleetEngineV1.UpdateVehicleAttributesRequest,
        caller: Principal
    ) async throws -> FleetEngineV1.UpdateVehicleAttributesResponse {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.vehicle(request.name)
        try AccessPolicy.check(caller, .updateVehicleAttributes, .vehicle(id), provider: provider)
        guard !request.attributes.isEmpty else {
            throw GoogleAPIError.invalidArgument("attributes must list at least one attribute.")
        }
        let changes = try Attributes.normalized(request.attributes, field: "attributes")
        let updated = try await store.updateVehicle(provider: provider, id: id) { current, _ in
            var attributes = current.attributes
            for change in changes {
                if let index = attributes.firstIndex(where: { $0.key == change.key }) {
                    attributes[index] = change
                } else {
                    attributes.append(change)
                }
            }
            guard attributes.count <= Attributes.maximumCount else {
                throw GoogleAPIError.invalidArgument(
                    "A vehicle has at most \(Attributes.maximumCount) attributes."
                )
            }
            var next = current
            next.attributes = attributes
            return next
        }
        var response = FleetEngineV1.UpdateVehicleAttributesResponse()
        response.attributes = updated.vehicle.attributes
        return response
    }

    /// DeleteVehicle: refused (`FAILED_PRECONDITION`) while trips are active on the vehicle.
    public func deleteVehicle(_ request: FleetEngineV1.DeleteVehicleRequest, caller: Principal) async throws {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.vehicle(request.name)
        try AccessPolicy.check(caller, .deleteVehicle, .vehicle(id), provider: provider)
        try await store.deleteVehicle(provider: provider, id: id)
    }
}
