import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// A SearchVehicles request, checked, and how it matches one vehicle.
///
/// Which vehicles with trips may match:
///
/// | `currentTripsPresent` | vehicles that may match |
/// |---|---|
/// | `NONE` | without active trips |
/// | `ANY` | with at most 5 active trips and 10 waypoints |
/// | unspecified | without active trips; with `includeBackToBack`, also a vehicle that enables back-to-back and has one trip, en route to its drop-off |
///
/// The match type is `EXCLUSIVE` for a vehicle without trips, `CARPOOL` for a shared search with trips on the
/// vehicle, `BACK_TO_BACK` otherwise. An exclusive or back-to-back vehicle drives its remaining waypoints first,
/// then to the pickup; a carpool picks up on the way.
struct VehicleSearch {
    let pickup: FleetEngineV1.LatLng
    let dropoff: FleetEngineV1.LatLng?
    let radius: Double
    let count: Int
    let tripType: FleetEngineV1.TripType
    let order: FleetEngineV1.SearchVehiclesRequest.VehicleMatchOrder
    let currentTrips: FleetEngineV1.SearchVehiclesRequest.CurrentTripsPresent
    let includeBackToBack: Bool

    init(_ request: FleetEngineV1.SearchVehiclesRequest) throws(GoogleAPIError) {
        // Presence (pickupPoint and its point, orderBy, …) is checked first, from the annotations (FieldBehaviors).
        pickup = request.pickupPoint.point
        if request.hasDropoffPoint {
            dropoff = request.dropoffPoint.point
        } else {
            dropoff = nil
        }
        guard (400...10_000).contains(request.pickupRadiusMeters) else {
            throw .invalidArgument("pickupRadiusMeters is required and must be between 400 and 10000.")
        }
        radius = Double(request.pickupRadiusMeters)
        guard (1...50).contains(request.count) else {
            throw .invalidArgument("count is required and must be between 1 and 50.")
        }
        count = Int(request.count)
        guard request.minimumCapacity >= 1 else {
            throw .invalidArgument("minimumCapacity is required and must be at least 1.")
        }
        guard request.tripTypes.count == 1, let type = request.tripTypes.first, type != .unknownTripType else {
            throw .invalidArgument("tripTypes must list exactly one trip type, SHARED or EXCLUSIVE.")
        }
        tripType = type
        guard !request.vehicleTypes.isEmpty, !request.vehicleTypes.contains(where: { $0.category == .unknown }) else {
            throw .invalidArgument("vehicleTypes must list at least one known vehicle type.")
        }
        order = request.orderBy
        if order == .dropoffPointEta, dropoff == nil {
            throw .invalidArgument("orderBy DROPOFF_POINT_ETA needs a dropoffPoint.")
        }
        if tripType == .shared, dropoff == nil {
            throw .invalidArgument("dropoffPoint is required for a SHARED trip.")
        }
        currentTrips = request.currentTripsPresent
        if tripType == .shared, currentTrips == .unspecified {
            throw .invalidArgument("currentTripsPresent must be set (NONE or ANY) when tripTypes includes SHARED.")
        }
        includeBackToBack = request.includeBackToBack
        if currentTrips != .unspecified, includeBackToBack {
            throw .invalidArgument("includeBackToBack cannot be true when currentTripsPresent is set.")
        }
        for (index, attribute) in request.requiredAttributes.enumerated() {
            guard !attribute.key.isEmpty else {
                throw .invalidArgument("requiredAttributes[\(index)].key is required.")
            }
        }
    }

    /// Whether a vehicle with these active trips may take the searched trip.
    func allows(_ vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip]) -> Bool {
        switch currentTrips {
        case .none:
            return activeTrips.isEmpty
        case .any:
            return activeTrips.count <= 5 && activeTrips.flatMap(RouteEstimator.remainingStops).count <= 10
        default:
            if activeTrips.isEmpty { return true }
            return includeBackToBack && vehicle.backToBackEnabled && activeTrips.count == 1
                && activeTrips[0].trip.tripStatus == .enrouteToDropoff
        }
    }

    /// The match of one vehicle that passed the shared criteria, or nil when it is out of range or may not take
    /// the trip. The caller fills in the rendered vehicle.
    func match(
        _ vehicle: FleetEngineV1.Vehicle,
        activeTrips: [StoredTrip],
        estimator: RouteEstimator,
        now: Date
    ) -> FleetEngineV1.VehicleMatch? {
        guard vehicle.hasLastLocation, vehicle.lastLocation.hasLocation, allows(vehicle, activeTrips: activeTrips)
        else { return nil }
        let position = vehicle.lastLocation.location
        let straight = RouteEstimator.distance(position, pickup)
        guard straight <= radius else { return nil }
        let type: FleetEngineV1.VehicleMatch.VehicleMatchType =
            activeTrips.isEmpty ? .exclusive : (tripType == .shared ? .carpool : .backToBack)
        let existing = estimator.waypoints(vehicle: vehicle, trips: activeTrips, now: now)
        var waypoints: [FleetEngineV1.Waypoint] = []
        var at = position
        var distance = 0.0
        func visit(_ point: FleetEngineV1.LatLng) -> Date {
            distance += RouteEstimator.distance(at, point)
            at = point
            let eta = now.addingTimeInterval(distance / estimator.speed)
            var waypoint = FleetEngineV1.Waypoint()
            waypoint.latLng = point
            waypoint.eta = Google_Protobuf_Timestamp(milliseconds: eta)
            waypoints.append(waypoint)
            return eta
        }
        if type != .carpool { for stop in existing where stop.location.hasPoint { _ = visit(stop.location.point) } }
        let pickupETA = visit(pickup)
        let pickupDistance = distance
        var dropoffETA: Date?
        if let dropoff { dropoffETA = visit(dropoff) }
        if type == .carpool { for stop in existing where stop.location.hasPoint { _ = visit(stop.location.point) } }

        var match = FleetEngineV1.VehicleMatch()
        match.vehiclePickupEta = Google_Protobuf_Timestamp(milliseconds: pickupETA)
        match.vehiclePickupDistanceMeters = Google_Protobuf_Int32Value(Int32(clamping: Int64(pickupDistance.rounded())))
        match.vehiclePickupStraightLineDistanceMeters = Google_Protobuf_Int32Value(
            Int32(clamping: Int64(straight.rounded()))
        )
        if let dropoff, let dropoffETA {
            match.vehicleDropoffEta = Google_Protobuf_Timestamp(milliseconds: dropoffETA)
            match.vehiclePickupToDropoffDistanceMeters = Google_Protobuf_Int32Value(
                Int32(clamping: Int64(RouteEstimator.distance(pickup, dropoff).rounded()))
            )
        }
        match.tripType = tripType
        match.vehicleTripsWaypoints = waypoints
        match.vehicleMatchType = type
        match.requestedOrderedBy = order
        match.orderedBy = order
        return match
    }

    /// At most the ``sortKey(_:)`` of a vehicle `straightDistance` metres from the pickup point, whatever its
    /// trips: every route to the pickup (and on to the drop-off) is at least as long as the straight line. A metre
    /// and a millisecond of slack cover rounding.
    func lowerBound(straightDistance: Double, now: Date, speed: Double) -> Double {
        let metres = straightDistance - 1
        switch order {
        case .dropoffPointEta:
            let onward = dropoff.map { RouteEstimator.distance(pickup, $0) } ?? 0
            return now.addingTimeInterval((metres + onward) / speed).timeIntervalSince1970 - 0.001
        case .pickupPointEta: return now.addingTimeInterval(metres / speed).timeIntervalSince1970 - 0.001
        default: return metres
        }
    }

    /// What the matches are sorted by, smallest first.
    func sortKey(_ match: FleetEngineV1.VehicleMatch) -> Double {
        switch order {
        case .pickupPointStraightDistance: Double(match.vehiclePickupStraightLineDistanceMeters.value)
        case .dropoffPointEta: match.vehicleDropoffEta.date.timeIntervalSince1970
        case .pickupPointEta: match.vehiclePickupEta.date.timeIntervalSince1970
        default: Double(match.vehiclePickupDistanceMeters.value)
        }
    }
}
