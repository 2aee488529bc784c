import FleetEngineAPI
import Foundation

/// What SearchVehicles shows a caller that may not read every vehicle (a consumer's token, whose role grants
/// `vehicles.search` and whose claims name a trip, not vehicles): the approximate location Google documents for the
/// Consumer SDK ("information about the approximate vehicle location for displaying the vehicle density layer and
/// estimating pickup point ETAs. Because the Consumer SDK uses only approximate locations, authorization tokens for
/// the vehicle service don't require a vehicleid claim": the Consumer SDK's *Get authorization tokens* page).
///
/// - The vehicle's position is snapped to a grid of 1/``cellsPerDegree`` degree (about 220 m of latitude)
///   *before* the search runs, so the radius, the ranking and every distance and ETA of the match are computed
///   from the approximate position too: moving the pickup point about cannot trilaterate the exact one.
/// - The vehicle answered holds its name, state, type, supported trip types and capacity, and a last location that
///   is the snapped point and its time alone: no license plate, no attributes, no current trips, no waypoints, no
///   route, no raw, fused or supplemental location, no device settings.
/// - The match keeps its estimates and types; `vehicleTripsWaypoints` (other riders' stops) is left out.
enum ApproximateVehicle {
    /// The grid the approximate position is snapped to: cells per degree of latitude and of longitude.
    static let cellsPerDegree = 500.0

    /// `point` snapped to the grid.
    static func snapped(_ point: FleetEngineV1.LatLng) -> FleetEngineV1.LatLng {
        var snapped = FleetEngineV1.LatLng()
        snapped.latitude = snap(point.latitude)
        snapped.longitude = snap(point.longitude)
        return snapped
    }

    static func snap(_ degrees: Double) -> Double { (degrees * cellsPerDegree).rounded() / cellsPerDegree }

    /// `vehicle` as the search sees it for such a caller: its last location reduced to the snapped point and
    /// its times; everything the match rules read besides (state, types, capacity, back-to-back) kept.
    static func searched(_ vehicle: FleetEngineV1.Vehicle) -> FleetEngineV1.Vehicle {
        var seen = vehicle
        guard vehicle.hasLastLocation else { return seen }
        var location = FleetEngineV1.VehicleLocation()
        if vehicle.lastLocation.hasLocation { location.location = snapped(vehicle.lastLocation.location) }
        if vehicle.lastLocation.hasUpdateTime { location.updateTime = vehicle.lastLocation.updateTime }
        if vehicle.lastLocation.hasServerTime { location.serverTime = vehicle.lastLocation.serverTime }
        seen.lastLocation = location
        return seen
    }

    /// The match as answered to such a caller: the vehicle (already ``searched(_:)``) reduced to what the
    /// density layer and a pickup ETA need, and no other rider's waypoint.
    static func answered(_ match: FleetEngineV1.VehicleMatch) -> FleetEngineV1.VehicleMatch {
        var answered = match
        var vehicle = FleetEngineV1.Vehicle()
        vehicle.name = match.vehicle.name
        vehicle.vehicleState = match.vehicle.vehicleState
        vehicle.supportedTripTypes = match.vehicle.supportedTripTypes
        vehicle.maximumCapacity = match.vehicle.maximumCapacity
        if match.vehicle.hasVehicleType { vehicle.vehicleType = match.vehicle.vehicleType }
        if match.vehicle.hasLastLocation { vehicle.lastLocation = match.vehicle.lastLocation }
        answered.vehicle = vehicle
        answered.vehicleTripsWaypoints = []
        return answered
    }
}
