import FleetAuthCore
import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import SwiftProtobuf

extension OnDemandService {
    /// CreateTrip: `tripType` and `pickupPoint` are required; `numberOfPassengers`, `vehicleId`, `dropoffPoint`,
    /// `intermediateDestinations`, `vehicleWaypoints` and `attributes` are used; the rest is ignored. A trip starts
    /// `NEW`; naming a vehicle assigns it (the vehicle must exist).
    public func createTrip(_ request: FleetEngineV1.CreateTripRequest, caller: Principal) async throws
        -> FleetEngineV1.Trip
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        let id = try ResourceName.id(request.tripID, field: "tripId")
        try AccessPolicy.check(caller, .createTrip, .trip(id, assignedVehicleID: nil), provider: provider)
        let given = request.trip
        try MessageChecks.trip(given)
        guard given.tripType != .unknownTripType else {
            throw GoogleAPIError.invalidArgument("trip.tripType is required.")
        }
        guard given.hasPickupPoint, given.pickupPoint.hasPoint else {
            throw GoogleAPIError.invalidArgument("trip.pickupPoint is required.")
        }
        try Self.checkIntermediateDestinations(given)
        var trip = FleetEngineV1.Trip()
        trip.tripStatus = .new
        trip.tripType = given.tripType
        trip.pickupPoint = given.pickupPoint
        if given.hasDropoffPoint { trip.dropoffPoint = given.dropoffPoint }
        trip.intermediateDestinations = given.intermediateDestinations
        if !trip.intermediateDestinations.isEmpty {
            trip.intermediateDestinationsVersion = Google_Protobuf_Timestamp(milliseconds: now)
        }
        trip.numberOfPassengers = given.numberOfPassengers
        trip.attributes = given.attributes
        if !given.vehicleID.isEmpty { trip.vehicleID = try ResourceName.id(given.vehicleID, field: "trip.vehicleId") }
        let stored = StoredTrip(id: id, trip: trip, updatedAt: now)
        try await store.insertTrip(stored, provider: provider)
        if !given.vehicleWaypoints.isEmpty, let vehicleID = stored.vehicleID {
            try await reorder(vehicleID, provider: provider, as: given.vehicleWaypoints)
        }
        return try await render(stored, provider: provider, answer: .write)
    }

    /// Google: "Only EXCLUSIVE trips support intermediate_destinations".
    static func checkIntermediateDestinations(_ trip: FleetEngineV1.Trip) throws(GoogleAPIError) {
        if trip.tripType == .shared, !trip.intermediateDestinations.isEmpty {
            throw .invalidArgument(
                "trip.intermediateDestinations is only supported for EXCLUSIVE trips; this trip is SHARED."
            )
        }
    }

    /// Reads a trip after checking the role, then the claim (which needs the trip's assigned vehicle): a caller
    /// without the role reads nothing, and a missing trip is `NOT_FOUND` only to callers the claim allows.
    func authorizedTrip(_ name: String, _ methods: [FleetEngineMethod], caller: Principal) async throws
        -> (provider: String, trip: StoredTrip)
    {
        let (provider, id) = try ResourceName.trip(name)
        for method in methods { try AccessPolicy.checkRole(account: caller.account, method: method) }
        let trip = try await store.trip(provider: provider, id: id)
        for method in methods {
            try AccessPolicy.check(caller, method, .trip(id, assignedVehicleID: trip?.vehicleID), provider: provider)
        }
        guard let trip else { throw GoogleAPIError.notFound("Trip \(name) not found.") }
        return (provider, trip)
    }

    /// GetTrip. `currentRouteSegmentVersion` leaves out the route segment and `remainingWaypointsRouteVersion` the
    /// waypoints' path and traffic when they have not changed since; `remainingWaypointsVersion` is deprecated and
    /// changes nothing; the other riders' stops (`vehicleWaypoints`) are never shown.
    public func getTrip(_ request: FleetEngineV1.GetTripRequest, caller: Principal) async throws -> FleetEngineV1.Trip {
        let request = try FieldBehaviors.checked(request)
        let (provider, trip) = try await authorizedTrip(request.name, [.getTrip], caller: caller)
        var answer = try await render(trip, provider: provider, answer: .read(request))
        // A shared vehicle's other trips stay on the route (Google: the remaining waypoints "could include waypoints
        // from other trips", and the path to each runs through them), but which trips they are only a caller that
        // may read those trips learns: a rider sees where the car stops, never whose stop it is.
        func named(_ waypoint: FleetEngineV1.TripWaypoint) -> FleetEngineV1.TripWaypoint {
            guard !waypoint.tripID.isEmpty, waypoint.tripID != trip.id,
                (try? AccessPolicy.check(
                    caller,
                    .getTrip,
                    .trip(waypoint.tripID, assignedVehicleID: trip.vehicleID),
                    provider: provider
                )) == nil
            else { return waypoint }
            var anonymous = waypoint
            anonymous.tripID = ""
            return anonymous
        }
        answer.remainingWaypoints = answer.remainingWaypoints.map(named)
        if answer.hasCurrentRouteSegmentEndPoint {
            answer.currentRouteSegmentEndPoint = named(answer.currentRouteSegmentEndPoint)
        }
        return answer
    }

    /// UpdateTrip: writes the fields the mask names. Changing `tripStatus` also needs `trips.updateState`; a driver
    /// may not hand its trip to another vehicle; `COMPLETE` and `CANCELED` are final; `intermediateDestinationsVersion`
    /// in the mask must equal the stored version.
    public func updateTrip(_ request: FleetEngineV1.UpdateTripRequest, caller: Principal) async throws
        -> FleetEngineV1.Trip
    {
        let request = try FieldBehaviors.checked(request)
        let paths = try FieldMasks.paths(request.updateMask.paths, updating: FieldMasks.trip)
        let methods: [FleetEngineMethod] =
            paths.contains("trip_status") ? [.updateTripState, .updateTrip] : [.updateTrip]
        let (provider, current) = try await authorizedTrip(request.name, methods, caller: caller)
        let source = request.trip
        try MessageChecks.trip(source)
        if paths.contains("vehicle_id"), !source.vehicleID.isEmpty {
            let target = try ResourceName.id(source.vehicleID, field: "trip.vehicleId")
            // A driver may not hand its trip to another vehicle.
            if !caller.account.ignoresClaims(for: .tripsUpdate), let claim = caller.claims.vehicleID,
                claim != FleetEngineID.wildcard, !target.hasSameBytes(as: claim)
            {
                throw GoogleAPIError.permissionDenied(
                    "The token's authorization claims do not cover vehicle \(target)"
                )
            }
        }
        if paths.contains("trip_status"), source.tripStatus == .unknownTripStatus {
            throw GoogleAPIError.invalidArgument("trip.tripStatus must be set to a known status.")
        }
        if paths.contains("trip_type"), source.tripType == .unknownTripType {
            throw GoogleAPIError.invalidArgument("trip.tripType must be SHARED or EXCLUSIVE.")
        }
        let now = self.now
        let updated = try await store.updateTrip(provider: provider, id: current.id) { stored in
            var next = stored
            let status = stored.trip.tripStatus
            guard stored.isActive else {
                throw GoogleAPIError.failedPrecondition(
                    "Trip \(request.name) is \(status); it cannot change any more."
                )
            }
            if paths.contains("intermediate_destinations_version"),
                source.intermediateDestinationsVersion != stored.trip.intermediateDestinationsVersion
            {
                throw GoogleAPIError.failedPrecondition(
                    "trip.intermediateDestinationsVersion is not the trip's: its intermediate destinations changed."
                )
            }
            // The input-only observations (`actual_…`) are checked, then not kept; the version is a precondition.
            for path in paths
            where !FieldMasks.trip.inputOnly.contains(path) && path != "intermediate_destinations_version" {
                next.trip.replaceField(path, from: source)
            }
            try Self.checkIntermediateDestinations(next.trip)
            if paths.contains("intermediate_destinations"),
                next.trip.intermediateDestinations != stored.trip.intermediateDestinations
            {
                next.trip.intermediateDestinationsVersion = Google_Protobuf_Timestamp(milliseconds: now)
            }
            guard next.trip.intermediateDestinationIndex <= next.trip.intermediateDestinations.count else {
                throw GoogleAPIError.invalidArgument(
                    "trip.intermediateDestinationIndex is beyond the trip's intermediate destinations."
                )
            }
            Self.recordArrivals(&next.trip, from: status, at: now)
            next.trip.vehicleWaypoints = []
            next.updatedAt = now
            return next
        }
        if paths.contains("vehicle_waypoints"), !source.vehicleWaypoints.isEmpty, let vehicleID = updated.vehicleID {
            try await reorder(vehicleID, provider: provider, as: source.vehicleWaypoints)
        }
        return try await render(updated, provider: provider, answer: .write)
    }

    /// Sets `pickupTime` when the rider is picked up and `dropoffTime` when the trip completes.
    static func recordArrivals(_ trip: inout FleetEngineV1.Trip, from previous: FleetEngineV1.TripStatus, at now: Date)
    {
        let pickedUp: Set<FleetEngineV1.TripStatus> = [
            .arrivedAtPickup, .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination,
            .enrouteToDropoff, .complete,
        ]
        if pickedUp.contains(trip.tripStatus), !pickedUp.contains(previous), !trip.hasPickupTime {
            trip.pickupTime = Google_Protobuf_Timestamp(milliseconds: now)
        }
        if trip.tripStatus == .complete, !trip.hasDropoffTime {
            trip.dropoffTime = Google_Protobuf_Timestamp(milliseconds: now)
        }
    }

    /// Keeps a new order of the vehicle's waypoints (it must list exactly the current ones).
    func reorder(_ vehicleID: String, provider: String, as waypoints: [FleetEngineV1.TripWaypoint]) async throws {
        _ = try await store.updateVehicle(provider: provider, id: vehicleID) { vehicle, trips in
            try Self.checkReorder(waypoints, of: trips, field: "trip.vehicleWaypoints")
            var next = vehicle
            next.waypoints = waypoints
            return next
        }
    }

    /// DeleteTrip: refused (`FAILED_PRECONDITION`) while the trip is active on a vehicle.
    public func deleteTrip(_ request: FleetEngineV1.DeleteTripRequest, caller: Principal) async throws {
        let request = try FieldBehaviors.checked(request)
        let (provider, trip) = try await authorizedTrip(request.name, [.deleteTrip], caller: caller)
        if trip.isActive, trip.vehicleID != nil {
            throw GoogleAPIError.failedPrecondition(
                "Trip \(request.name) is active and assigned to a vehicle; complete or cancel it first."
            )
        }
        try await store.deleteTrip(provider: provider, id: trip.id)
    }

    /// SearchTrips: a vehicle's trips (every trip of the provider when no vehicle is named, which needs
    /// `vehicleid: "*"`, and then without `currentRouteSegment`, `remainingWaypoints`, `remainingDistanceMeters` and
    /// `etaToFirstWaypoint`), optionally active ones only, and with `minimumStaleness` only those unchanged for at
    /// least that long.
    public func searchTrips(_ request: FleetEngineV1.SearchTripsRequest, caller: Principal) async throws
        -> FleetEngineV1.SearchTripsResponse
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        let vehicleID = request.vehicleID.isEmpty ? nil : try ResourceName.id(request.vehicleID, field: "vehicleId")
        try AccessPolicy.check(caller, .searchTrips, .tripSearch(vehicleID: vehicleID), provider: provider)
        let page = try Paging.page(request)
        var staleBefore: Date?
        if request.hasMinimumStaleness {
            staleBefore = try VehicleCriteria.freshSince(request.minimumStaleness, now: now, field: "minimumStaleness")
        }
        // One more than the page: whether there is a next page.
        var found = try await store.trips(
            provider: provider,
            vehicleID: vehicleID,
            activeOnly: request.activeTripsOnly,
            updatedAtMost: staleBefore,
            afterID: page.afterID,
            limit: page.size + 1
        )
        let more = found.count > page.size
        if more { found.removeLast() }
        var response = FleetEngineV1.SearchTripsResponse()
        for trip in found {
            response.trips.append(
                try await render(trip, provider: provider, answer: .search(vehicleNamed: vehicleID != nil))
            )
        }
        if more, let last = found.last { response.nextPageToken = Paging.token(after: last.id, of: request) }
        return response
    }

    /// ReportBillableTrip: checked and accepted. No published role names its permission; the emulator asks for a
    /// backend's (`trips.create`, with `tripid: "*"`).
    public func reportBillableTrip(_ request: FleetEngineV1.ReportBillableTripRequest, caller: Principal) async throws {
        let request = try FieldBehaviors.checked(request)
        let (provider, _) = try ResourceName.resource(request.name, collection: "billableTrips")
        try AccessPolicy.check(caller, .reportBillableTrip, .allTrips, provider: provider)
        guard request.countryCode.utf8.count == 2, request.countryCode.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw GoogleAPIError.invalidArgument("countryCode is required: a two-letter country code.")
        }
        guard request.relatedIds.count <= 50 else {
            throw GoogleAPIError.invalidArgument(
                "relatedIds lists \(request.relatedIds.count) IDs; at most 50 are allowed."
            )
        }
        for (index, related) in request.relatedIds.enumerated() {
            _ = try ResourceName.id(related, field: "relatedIds[\(index)]")
        }
    }
}
