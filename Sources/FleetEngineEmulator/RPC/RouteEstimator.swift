import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// Where Fleet Engine computes from a road network, the emulator computes from straight lines at a stated speed:
/// distances are great-circle distances, times are distance ÷ ``speed``. The values are plausible and change as
/// vehicles move, which is what backends and journey-sharing pages need locally; they are not driving distances.
///
/// A vehicle's waypoints are the remaining stops of its active trips — for each trip, by its status: pickup (until
/// en route to drop-off or an intermediate destination), the intermediate destinations from
/// `intermediateDestinationIndex`, and drop-off — trip after trip in ID order, or in the order a backend or driver
/// last set with `waypoints` / `vehicleWaypoints` while it still lists exactly the same stops. When the driver has
/// reported `remainingDistanceMeters` and an ETA for the current route segment, the first leg uses them.
struct RouteEstimator: Sendable {
    /// Metres per second on every leg (default 10 m/s, 36 km/h: city driving).
    let speed: Double

    /// One remaining stop of a trip.
    struct Stop: Hashable, Sendable {
        var tripID: String
        var type: FleetEngineV1.WaypointType
        var location: FleetEngineV1.TerminalLocation
    }

    /// The stops `trip` still has to visit, given its status.
    static func remainingStops(of trip: StoredTrip) -> [Stop] {
        let body = trip.trip
        var stops: [Stop] = []
        let index = Int(max(body.intermediateDestinationIndex, 0))
        switch body.tripStatus {
        case .complete, .canceled:
            return []
        case .enrouteToDropoff:
            break
        case .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination:
            stops += body.intermediateDestinations.dropFirst(index).map {
                Stop(tripID: trip.id, type: .intermediateDestinationWaypointType, location: $0)
            }
        default:
            if body.hasPickupPoint {
                stops.append(Stop(tripID: trip.id, type: .pickupWaypointType, location: body.pickupPoint))
            }
            stops += body.intermediateDestinations.map {
                Stop(tripID: trip.id, type: .intermediateDestinationWaypointType, location: $0)
            }
        }
        if body.hasDropoffPoint {
            stops.append(Stop(tripID: trip.id, type: .dropOffWaypointType, location: body.dropoffPoint))
        }
        return stops
    }

    /// The stops of `trips` in the order `preferred` gives (tripID and type of each), when it names exactly the
    /// same stops; otherwise trip after trip.
    static func ordered(_ trips: [StoredTrip], preferred: [FleetEngineV1.TripWaypoint]) -> [Stop] {
        let stops = trips.flatMap(remainingStops)
        let key = { (tripID: String, type: FleetEngineV1.WaypointType) in "\(type.rawValue)/\(tripID)" }
        let wanted = preferred.map { key($0.tripID, $0.waypointType) }
        guard !wanted.isEmpty, wanted.sorted() == stops.map({ key($0.tripID, $0.type) }).sorted() else { return stops }
        var remaining = stops
        var result: [Stop] = []
        for name in wanted {
            if let index = remaining.firstIndex(where: { key($0.tripID, $0.type) == name }) {
                result.append(remaining.remove(at: index))
            }
        }
        return result + remaining
    }

    /// The waypoints of `vehicle` with `trips` active on it at `now`: each with its leg's distance and duration
    /// (from the vehicle's last location for the first) and its ETA, when the vehicle's location is known.
    func waypoints(vehicle: FleetEngineV1.Vehicle, trips: [StoredTrip], now: Date) -> [FleetEngineV1.TripWaypoint] {
        let stops = Self.ordered(trips, preferred: vehicle.waypoints)
        var from: FleetEngineV1.LatLng? =
            vehicle.hasLastLocation && vehicle.lastLocation.hasLocation ? vehicle.lastLocation.location : nil
        var arrival = now
        var waypoints: [FleetEngineV1.TripWaypoint] = []
        for (index, stop) in stops.enumerated() {
            var waypoint = FleetEngineV1.TripWaypoint()
            waypoint.location = stop.location
            waypoint.tripID = stop.tripID
            waypoint.waypointType = stop.type
            if let start = from, stop.location.hasPoint {
                var metres = Self.distance(start, stop.location.point)
                var seconds = metres / speed
                if index == 0, vehicle.hasRemainingDistanceMeters, vehicle.hasEtaToFirstWaypoint,
                    vehicle.etaToFirstWaypoint.date > now
                {
                    // The driver's own estimate for the segment it is driving.
                    metres = Double(vehicle.remainingDistanceMeters.value)
                    seconds = vehicle.etaToFirstWaypoint.date.timeIntervalSince(now)
                }
                arrival = arrival.addingTimeInterval(seconds)
                waypoint.distanceMeters = Google_Protobuf_Int32Value(Int32(clamping: Int64(metres.rounded())))
                waypoint.duration = Google_Protobuf_Duration(seconds: Int64(seconds.rounded()))
                waypoint.eta = Google_Protobuf_Timestamp(milliseconds: arrival)
                waypoint.pathToWaypoint = [start, stop.location.point]
            }
            if stop.location.hasPoint { from = stop.location.point }
            waypoints.append(waypoint)
        }
        return waypoints
    }

    /// Great-circle distance in metres (haversine, mean Earth radius).
    static func distance(_ a: FleetEngineV1.LatLng, _ b: FleetEngineV1.LatLng) -> Double {
        distance(a.latitude, a.longitude, b.latitude, b.longitude)
    }

    /// Great-circle distance in metres between two points given in degrees.
    static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let a =
            sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 6_371_008.8 * 2 * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}
