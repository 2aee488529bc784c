package import FleetAuthCore
import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// Fleet Engine's vehicle and trip RPCs, implemented once for both transports: the REST routes and the gRPC
/// services turn their requests into `maps.fleetengine.v1` request messages, authenticate the caller into a
/// ``Principal``, and call the method of the same name here. Each method authorizes the call
/// (<doc:AuthorizationModel>) before it reads or writes anything, validates the request, and answers with the
/// response message; failures are `GoogleAPIError`s (and the store's `StoreError`s, answered the same way).
public struct OnDemandService: Sendable {
    /// Choices where the emulator stands in for what Fleet Engine computes.
    public struct Configuration: Sendable, Hashable {
        /// The speed of every vehicle on every leg, in metres per second, for ETAs (default 10, 36 km/h).
        public var speed: Double

        public init(speed: Double = 10) {
            self.speed = speed
        }
    }

    let store: any OnDemandStore
    let clock: any WallClock
    let estimator: RouteEstimator

    /// - Parameters:
    ///   - store: where vehicles and trips live.
    ///   - clock: the time of server-set times and ETAs.
    ///   - configuration: the stand-in speed.
    package init(
        store: any OnDemandStore,
        clock: any WallClock = .system,
        configuration: Configuration = Configuration()
    ) {
        self.store = store
        self.clock = clock
        self.estimator = RouteEstimator(speed: configuration.speed)
    }

    var now: Date { clock.currentDate }

    /// The error a transport answers for any failure of a method: a `GoogleAPIError` as it is, a store's error
    /// in Google's terms, anything else `INTERNAL`.
    public static func apiError(_ error: any Error) -> GoogleAPIError {
        switch error {
        case let error as GoogleAPIError: error
        case let error as StoreError: GoogleAPIError(error)
        // Never the error's own text: a database's error names its SQL, a driver's its internals.
        default: .internal("The emulator failed on an internal error.")
        }
    }

    // MARK: Rendering

    /// A vehicle as answered: its name, its active trips, its waypoints derived from them, and the estimates
    /// for its first waypoint when the driver has not reported them.
    func render(
        _ stored: FleetEngineV1.Vehicle,
        provider: String,
        id: String,
        activeTrips: [StoredTrip]
    ) -> FleetEngineV1.Vehicle {
        var vehicle = stored
        vehicle.name = ResourceName.vehicleName(provider: provider, id: id)
        vehicle.currentTrips = activeTrips.map(\.id)
        vehicle.waypoints = estimator.waypoints(vehicle: stored, trips: activeTrips, now: now)
        if let version = activeTrips.map(\.updatedAt).max() {
            vehicle.waypointsVersion = Google_Protobuf_Timestamp(milliseconds: version)
        } else {
            vehicle.clearWaypointsVersion()
        }
        if let first = vehicle.waypoints.first, first.hasEta {
            if !vehicle.hasEtaToFirstWaypoint || vehicle.etaToFirstWaypoint.date <= now {
                vehicle.etaToFirstWaypoint = first.eta
            }
            if !vehicle.hasRemainingDistanceMeters { vehicle.remainingDistanceMeters = first.distanceMeters }
        }
        return vehicle
    }

    /// Why a trip is rendered: its create and update answers also carry the vehicle's waypoints, which GetTrip
    /// never shows (other riders' stops are private); SearchTrips without a vehicle leaves out the route and the
    /// estimates.
    enum TripAnswer {
        case write
        case read(FleetEngineV1.GetTripRequest)
        case search(vehicleNamed: Bool)
    }

    /// A trip as answered: its name, and while active on a vehicle, the vehicle's last location and the estimates
    /// of its remaining waypoints.
    func render(_ stored: StoredTrip, provider: String, answer: TripAnswer) async throws -> FleetEngineV1.Trip {
        var trip = stored.trip
        trip.name = ResourceName.tripName(provider: provider, id: stored.id)
        if case .read(let request) = answer { trip.view = request.view }
        guard stored.isActive, let vehicleID = stored.vehicleID,
            let (vehicle, trips) = try await store.vehicleWithActiveTrips(provider: provider, id: vehicleID)
        else { return trip }
        let waypoints = estimator.waypoints(vehicle: vehicle, trips: trips, now: now)
        if vehicle.hasLastLocation { trip.lastLocation = vehicle.lastLocation }
        if let last = waypoints.lastIndex(where: { $0.tripID == stored.id }) {
            trip.remainingWaypoints = Array(waypoints[...last])
        }
        if let version = trips.map(\.updatedAt).max() {
            trip.remainingWaypointsVersion = Google_Protobuf_Timestamp(milliseconds: version)
        }
        if let first = waypoints.first {
            // `Trip.route`, the LAT_LNG_LIST form of the route to the first remaining waypoint (the default).
            trip.route = first.pathToWaypoint
        }
        if let first = waypoints.first, first.hasEta {
            trip.remainingDistanceMeters = first.distanceMeters
            trip.etaToFirstWaypoint = first.eta
            trip.remainingTimeToFirstWaypoint = Google_Protobuf_Duration(
                seconds: Int64(max(first.eta.date.timeIntervalSince(now), 0).rounded())
            )
        }
        if !trip.hasPickupTime,
            let pickup = waypoints.first(where: { $0.tripID == stored.id && $0.waypointType == .pickupWaypointType }),
            pickup.hasEta
        {
            trip.pickupTime = pickup.eta
        }
        if !trip.hasDropoffTime,
            let dropoff = waypoints.first(where: { $0.tripID == stored.id && $0.waypointType == .dropOffWaypointType }),
            dropoff.hasEta
        {
            trip.dropoffTime = dropoff.eta
        }
        if !vehicle.currentRouteSegment.isEmpty {
            trip.currentRouteSegment = vehicle.currentRouteSegment
            trip.currentRouteSegmentVersion = vehicle.currentRouteSegmentVersion
            if vehicle.hasCurrentRouteSegmentEndPoint {
                trip.currentRouteSegmentEndPoint = vehicle.currentRouteSegmentEndPoint
            }
        }
        switch answer {
        case .write:
            trip.vehicleWaypoints = waypoints
        case .read(let request):
            if request.routeFormatType == .encodedPolylineType { trip.route = [] }
            if request.hasCurrentRouteSegmentVersion, trip.hasCurrentRouteSegmentVersion,
                trip.currentRouteSegmentVersion.date <= request.currentRouteSegmentVersion.date
            {
                trip.currentRouteSegment = ""
            }
            // `remainingWaypointsVersion` is deprecated: the waypoints are always answered. Only their traffic and
            // path depend on `remainingWaypointsRouteVersion`.
            if request.hasRemainingWaypointsRouteVersion, trip.hasRemainingWaypointsVersion,
                trip.remainingWaypointsVersion.date <= request.remainingWaypointsRouteVersion.date
            {
                for index in trip.remainingWaypoints.indices {
                    trip.remainingWaypoints[index].pathToWaypoint = []
                    trip.remainingWaypoints[index].clearTrafficToWaypoint()
                }
            }
        case .search(let vehicleNamed):
            if !vehicleNamed {
                trip.currentRouteSegment = ""
                trip.remainingWaypoints = []
                trip.clearRemainingDistanceMeters()
                trip.clearEtaToFirstWaypoint()
            }
        }
        return trip
    }

}
