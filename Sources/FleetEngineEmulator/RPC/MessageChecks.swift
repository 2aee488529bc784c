import FleetAuthServerCore
import FleetEngineAPI
import SwiftProtobuf

/// The checks on message values that neither the proto types nor the annotations' walk (``FieldBehaviors``: required
/// fields, known enum values, coordinate ranges) make: other ranges, the shapes of nested messages. Each names the
/// field in Google's REST spelling.
enum MessageChecks {
    static func latLng(_ point: FleetEngineV1.LatLng, _ field: String) throws(GoogleAPIError) {
        if let fault = coordinateFault(point) { throw .invalidArgument("\(field).\(fault.part) \(fault.problem)") }
    }

    /// What is wrong with a coordinate pair, if anything: the part at fault and why. A latitude is in [-90, 90] and
    /// a longitude in [-180, 180] (`google.type.LatLng`).
    static func coordinateFault(_ point: FleetEngineV1.LatLng) -> (part: String, problem: String)? {
        guard (-90...90).contains(point.latitude) else { return ("latitude", "must be in [-90, 90].") }
        guard (-180...180).contains(point.longitude) else { return ("longitude", "must be in [-180, 180].") }
        return nil
    }

    /// A location's heading and speed (either API's location message).
    static func location(_ location: some ReportedLocation, _ field: String) throws(GoogleAPIError) {
        if location.hasHeading, !(0..<360).contains(location.heading.value) {
            throw .invalidArgument("\(field).heading must be in [0, 360).")
        }
        if location.hasSpeed, location.speed.value < 0 {
            throw .invalidArgument("\(field).speed must not be negative.")
        }
    }

    static func waypoint(_ waypoint: FleetEngineV1.TripWaypoint, _ field: String) throws(GoogleAPIError) {
        guard waypoint.location.hasPoint else { throw .invalidArgument("\(field).location.point is required.") }
        guard waypoint.waypointType != .unknownWaypointType else {
            throw .invalidArgument("\(field).waypointType is required.")
        }
        guard !waypoint.tripID.isEmpty else { throw .invalidArgument("\(field).tripId is required.") }
        _ = try ResourceName.id(waypoint.tripID, field: "\(field).tripId")
        if waypoint.hasDistanceMeters, waypoint.distanceMeters.value < 0 {
            throw .invalidArgument("\(field).distanceMeters must not be negative.")
        }
    }

    /// Every field of a vehicle that a request may carry.
    static func vehicle(_ vehicle: FleetEngineV1.Vehicle, _ field: String = "vehicle") throws(GoogleAPIError) {
        for (index, type) in vehicle.supportedTripTypes.enumerated() {
            guard type != .unknownTripType else {
                throw .invalidArgument("\(field).supportedTripTypes[\(index)] must be SHARED or EXCLUSIVE.")
            }
        }
        guard Set(vehicle.supportedTripTypes).count == vehicle.supportedTripTypes.count else {
            throw .invalidArgument("\(field).supportedTripTypes lists a trip type twice.")
        }
        if vehicle.hasLastLocation { try location(vehicle.lastLocation, "\(field).lastLocation") }
        for (index, past) in vehicle.pastLocations.enumerated() {
            try location(past, "\(field).pastLocations[\(index)]")
        }
        guard vehicle.maximumCapacity >= 0 else { throw .invalidArgument("\(field).maximumCapacity must be positive.") }
        if vehicle.hasCurrentRouteSegmentEndPoint {
            // Google accepts "a full trip waypoint, a waypoint LatLng, or … the last LatLng" of the segment: only
            // the location is required.
            let end = vehicle.currentRouteSegmentEndPoint
            let place = "\(field).currentRouteSegmentEndPoint"
            guard end.location.hasPoint else { throw .invalidArgument("\(place).location.point is required.") }
            if !end.tripID.isEmpty { _ = try ResourceName.id(end.tripID, field: "\(place).tripId") }
        }
        if vehicle.hasRemainingDistanceMeters, vehicle.remainingDistanceMeters.value < 0 {
            throw .invalidArgument("\(field).remainingDistanceMeters must not be negative.")
        }
        if vehicle.hasRemainingTimeSeconds, vehicle.remainingTimeSeconds.value < 0 {
            throw .invalidArgument("\(field).remainingTimeSeconds must not be negative.")
        }
        for (index, stop) in vehicle.waypoints.enumerated() { try waypoint(stop, "\(field).waypoints[\(index)]") }
        if vehicle.hasDeviceSettings {
            let settings = vehicle.deviceSettings
            guard (0...100).contains(settings.batteryInfo.batteryPercentage) else {
                throw .invalidArgument("\(field).deviceSettings.batteryInfo.batteryPercentage must be in [0, 100].")
            }
        }
        for (index, stretch) in vehicle.currentRouteSegmentTraffic.trafficRendering.roadStretch.enumerated() {
            let place = "\(field).currentRouteSegmentTraffic.trafficRendering.roadStretch[\(index)]"
            guard stretch.offsetMeters >= 0, stretch.lengthMeters >= 0 else {
                throw .invalidArgument("\(place): offsetMeters and lengthMeters must not be negative.")
            }
        }
    }

    /// Every field of a trip that a request may carry.
    static func trip(_ trip: FleetEngineV1.Trip, _ field: String = "trip") throws(GoogleAPIError) {
        guard trip.intermediateDestinations.count <= 25 else {
            throw .invalidArgument("\(field).intermediateDestinations has more than 25 stops.")
        }
        guard trip.intermediateDestinationIndex >= 0 else {
            throw .invalidArgument("\(field).intermediateDestinationIndex must not be negative.")
        }
        for (index, stop) in trip.vehicleWaypoints.enumerated() {
            try waypoint(stop, "\(field).vehicleWaypoints[\(index)]")
        }
        guard (0...100).contains(trip.numberOfPassengers) else {
            throw .invalidArgument("\(field).numberOfPassengers must be between 0 and 100.")
        }
        try Attributes.checkTripAttributes(trip.attributes, field: "\(field).attributes")
    }
}

/// A location a driver reports, in either API: what ``MessageChecks/location(_:_:)`` checks.
protocol ReportedLocation {
    var hasHeading: Bool { get }
    var heading: Google_Protobuf_Int32Value { get }
    var hasSpeed: Bool { get }
    var speed: Google_Protobuf_DoubleValue { get }
}

extension FleetEngineV1.VehicleLocation: ReportedLocation {}
extension FleetEngineDelivery.DeliveryVehicleLocation: ReportedLocation {}
