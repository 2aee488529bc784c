import FleetAuthServerCore
import FleetEngineAPI
import SwiftProtobuf

/// The checks on message values that the proto types alone do not make: ranges, known enum values, the shapes
/// of nested messages. Each names the field in Google's REST spelling.
enum MessageChecks {
    static func latLng(_ point: FleetEngineV1.LatLng, _ field: String) throws(GoogleAPIError) {
        guard (-90...90).contains(point.latitude) else {
            throw .invalidArgument("\(field).latitude must be in [-90, 90].")
        }
        guard (-180...180).contains(point.longitude) else {
            throw .invalidArgument("\(field).longitude must be in [-180, 180].")
        }
    }

    static func known<E: SwiftProtobuf.Enum & CaseIterable>(_ value: E, _ field: String) throws(GoogleAPIError) {
        guard E.allCases.contains(value) else {
            throw .invalidArgument("\(field) has an unknown value (\(value.rawValue)).")
        }
    }

    /// `DeviceLocationSensor.FLEET_ENGINE_LOCATION` (6, in both APIs' enums) marks a location Fleet Engine computed;
    /// Google: "This value will be rejected if it is received in a request."
    static let fleetEngineLocationSensor = 6

    /// A location sensor a request may send: known, and not Fleet Engine's own.
    static func sensor<E: SwiftProtobuf.Enum & CaseIterable>(_ value: E, _ field: String) throws(GoogleAPIError) {
        try known(value, field)
        guard value.rawValue != fleetEngineLocationSensor else {
            throw .invalidArgument("\(field) cannot be FLEET_ENGINE_LOCATION: only Fleet Engine sets it.")
        }
    }

    static func location(_ location: FleetEngineV1.VehicleLocation, _ field: String) throws(GoogleAPIError) {
        for (point, has, name) in [
            (location.location, location.hasLocation, "location"),
            (location.rawLocation, location.hasRawLocation, "rawLocation"),
            (location.flpLocation, location.hasFlpLocation, "flpLocation"),
            (location.supplementalLocation, location.hasSupplementalLocation, "supplementalLocation"),
        ] where has {
            try latLng(point, "\(field).\(name)")
        }
        if location.hasHeading, !(0..<360).contains(location.heading.value) {
            throw .invalidArgument("\(field).heading must be in [0, 360).")
        }
        if location.hasSpeed, location.speed.value < 0 {
            throw .invalidArgument("\(field).speed must not be negative.")
        }
        try sensor(location.locationSensor, "\(field).locationSensor")
        try sensor(location.rawLocationSensor, "\(field).rawLocationSensor")
        try sensor(location.supplementalLocationSensor, "\(field).supplementalLocationSensor")
    }

    static func terminal(_ location: FleetEngineV1.TerminalLocation, _ field: String, required: Bool = false)
        throws(GoogleAPIError)
    {
        guard location.hasPoint else {
            if required { throw .invalidArgument("\(field).point is required.") }
            return
        }
        try latLng(location.point, "\(field).point")
    }

    static func waypoint(_ waypoint: FleetEngineV1.TripWaypoint, _ field: String) throws(GoogleAPIError) {
        try terminal(waypoint.location, "\(field).location", required: true)
        try known(waypoint.waypointType, "\(field).waypointType")
        guard waypoint.waypointType != .unknownWaypointType else {
            throw .invalidArgument("\(field).waypointType is required.")
        }
        guard !waypoint.tripID.isEmpty else { throw .invalidArgument("\(field).tripId is required.") }
        _ = try ResourceName.id(waypoint.tripID, field: "\(field).tripId")
        for (index, point) in waypoint.pathToWaypoint.enumerated() {
            try latLng(point, "\(field).pathToWaypoint[\(index)]")
        }
        if waypoint.hasDistanceMeters, waypoint.distanceMeters.value < 0 {
            throw .invalidArgument("\(field).distanceMeters must not be negative.")
        }
    }

    static func stop(_ stop: FleetEngineV1.StopLocation, _ field: String) throws(GoogleAPIError) {
        guard stop.hasPoint else { throw .invalidArgument("\(field).point is required.") }
        try latLng(stop.point, "\(field).point")
    }

    /// Every field of a vehicle that a request may carry.
    static func vehicle(_ vehicle: FleetEngineV1.Vehicle, _ field: String = "vehicle") throws(GoogleAPIError) {
        try known(vehicle.vehicleState, "\(field).vehicleState")
        for (index, type) in vehicle.supportedTripTypes.enumerated() {
            try known(type, "\(field).supportedTripTypes[\(index)]")
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
        if vehicle.hasVehicleType { try known(vehicle.vehicleType.category, "\(field).vehicleType.category") }
        for (index, stop) in vehicle.route.enumerated() { try terminal(stop, "\(field).route[\(index)]") }
        if vehicle.hasCurrentRouteSegmentEndPoint {
            // Google accepts "a full trip waypoint, a waypoint LatLng, or … the last LatLng" of the segment: only
            // the location is required.
            let end = vehicle.currentRouteSegmentEndPoint
            let place = "\(field).currentRouteSegmentEndPoint"
            try terminal(end.location, "\(place).location", required: true)
            try known(end.waypointType, "\(place).waypointType")
            if !end.tripID.isEmpty { _ = try ResourceName.id(end.tripID, field: "\(place).tripId") }
        }
        if vehicle.hasRemainingDistanceMeters, vehicle.remainingDistanceMeters.value < 0 {
            throw .invalidArgument("\(field).remainingDistanceMeters must not be negative.")
        }
        if vehicle.hasRemainingTimeSeconds, vehicle.remainingTimeSeconds.value < 0 {
            throw .invalidArgument("\(field).remainingTimeSeconds must not be negative.")
        }
        for (index, stop) in vehicle.waypoints.enumerated() { try waypoint(stop, "\(field).waypoints[\(index)]") }
        try known(vehicle.navigationStatus, "\(field).navigationStatus")
        if vehicle.hasDeviceSettings {
            let settings = vehicle.deviceSettings
            try known(settings.locationPowerSaveMode, "\(field).deviceSettings.locationPowerSaveMode")
            try known(settings.batteryInfo.batteryStatus, "\(field).deviceSettings.batteryInfo.batteryStatus")
            try known(settings.batteryInfo.powerSource, "\(field).deviceSettings.batteryInfo.powerSource")
            guard (0...100).contains(settings.batteryInfo.batteryPercentage) else {
                throw .invalidArgument("\(field).deviceSettings.batteryInfo.batteryPercentage must be in [0, 100].")
            }
        }
        for (index, stretch) in vehicle.currentRouteSegmentTraffic.trafficRendering.roadStretch.enumerated() {
            let place = "\(field).currentRouteSegmentTraffic.trafficRendering.roadStretch[\(index)]"
            try known(stretch.style, "\(place).style")
            guard stretch.offsetMeters >= 0, stretch.lengthMeters >= 0 else {
                throw .invalidArgument("\(place): offsetMeters and lengthMeters must not be negative.")
            }
        }
    }

    /// Every field of a trip that a request may carry.
    static func trip(_ trip: FleetEngineV1.Trip, _ field: String = "trip") throws(GoogleAPIError) {
        try known(trip.tripStatus, "\(field).tripStatus")
        try known(trip.tripType, "\(field).tripType")
        try terminal(trip.pickupPoint, "\(field).pickupPoint")
        try terminal(trip.dropoffPoint, "\(field).dropoffPoint")
        for (index, stop) in trip.intermediateDestinations.enumerated() {
            try terminal(stop, "\(field).intermediateDestinations[\(index)]", required: true)
        }
        guard trip.intermediateDestinations.count <= 25 else {
            throw .invalidArgument("\(field).intermediateDestinations has more than 25 stops.")
        }
        guard trip.intermediateDestinationIndex >= 0 else {
            throw .invalidArgument("\(field).intermediateDestinationIndex must not be negative.")
        }
        for (name, stop, has) in [
            ("actualPickupPoint", trip.actualPickupPoint, trip.hasActualPickupPoint),
            ("actualPickupArrivalPoint", trip.actualPickupArrivalPoint, trip.hasActualPickupArrivalPoint),
            ("actualDropoffPoint", trip.actualDropoffPoint, trip.hasActualDropoffPoint),
        ] where has {
            try MessageChecks.stop(stop, "\(field).\(name)")
        }
        for (index, stop) in trip.actualIntermediateDestinations.enumerated() {
            try MessageChecks.stop(stop, "\(field).actualIntermediateDestinations[\(index)]")
        }
        for (index, stop) in trip.actualIntermediateDestinationArrivalPoints.enumerated() {
            try MessageChecks.stop(stop, "\(field).actualIntermediateDestinationArrivalPoints[\(index)]")
        }
        for (index, stop) in trip.vehicleWaypoints.enumerated() {
            try waypoint(stop, "\(field).vehicleWaypoints[\(index)]")
        }
        guard (0...100).contains(trip.numberOfPassengers) else {
            throw .invalidArgument("\(field).numberOfPassengers must be between 0 and 100.")
        }
        try known(trip.view, "\(field).view")
        try Attributes.checkTripAttributes(trip.attributes, field: "\(field).attributes")
    }
}
