import FleetAuthCore

/// `maps.fleetengine.v1.Trip` in the REST JSON mapping (Google's
/// [Trip reference](https://developers.google.com/maps/documentation/mobility/fleet-engine/reference/trips/rest/v1/providers.trips)).
enum TripSchema {
    static let statuses = [
        "UNKNOWN_TRIP_STATUS", "NEW", "ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF", "COMPLETE",
        "CANCELED", "ARRIVED_AT_INTERMEDIATE_DESTINATION", "ENROUTE_TO_INTERMEDIATE_DESTINATION",
    ]
    static let terminalStatuses: Set<String> = ["COMPLETE", "CANCELED"]
    static let views = ["TRIP_VIEW_UNSPECIFIED", "SDK", "JOURNEY_SHARING_V1S"]

    static let terminalLocation = MessageSchema(
        name: "TerminalLocation",
        fields: [
            "point": .message(.latLng), "terminalPointId": .any, "accessPointId": .string, "tripId": .string,
            "terminalLocationType": .any,
        ]
    )
    static let stopLocation = MessageSchema(
        name: "StopLocation",
        fields: ["point": .message(.latLng), "timestamp": .timestamp, "stopTime": .timestamp]
    )

    static let trip = MessageSchema(
        name: "Trip",
        fields: [
            "name": .string, "vehicleId": .string, "tripStatus": .enumeration(statuses),
            "tripType": .enumeration(VehicleSchema.tripTypes), "pickupPoint": .message(terminalLocation),
            "actualPickupPoint": .message(stopLocation), "actualPickupArrivalPoint": .message(stopLocation),
            "pickupTime": .timestamp,
            "intermediateDestinations": .repeated(.message(terminalLocation), maximumCount: 25),
            "intermediateDestinationsVersion": .timestamp, "intermediateDestinationIndex": .integer(min: 0, max: 25),
            "actualIntermediateDestinationArrivalPoints": .repeated(.message(stopLocation), maximumCount: 25),
            "actualIntermediateDestinations": .repeated(.message(stopLocation), maximumCount: 25),
            "dropoffPoint": .message(terminalLocation), "actualDropoffPoint": .message(stopLocation),
            "dropoffTime": .timestamp, "remainingWaypoints": .repeated(.any, maximumCount: 1000),
            "vehicleWaypoints": .repeated(.any, maximumCount: 1000), "route": .repeated(.any, maximumCount: 10_000),
            "currentRouteSegment": .string, "currentRouteSegmentVersion": .timestamp,
            "currentRouteSegmentTraffic": .any, "currentRouteSegmentTrafficVersion": .timestamp,
            "currentRouteSegmentEndPoint": .any, "remainingDistanceMeters": .integer(min: 0, max: Int64(Int32.max)),
            "etaToFirstWaypoint": .timestamp, "remainingTimeToFirstWaypoint": .duration,
            "remainingWaypointsVersion": .timestamp, "remainingWaypointsRouteVersion": .timestamp,
            "numberOfPassengers": .integer(min: 0, max: 100), "lastLocation": .any, "lastLocationSnappable": .bool,
            "view": .enumeration(views), "attributes": .repeated(.message(VehicleSchema.attribute), maximumCount: 100),
        ]
    )

    /// The fields CreateTrip uses; it ignores the rest.
    static let usedOnCreate: Set<String> = [
        "tripType", "pickupPoint", "numberOfPassengers", "vehicleId", "dropoffPoint", "intermediateDestinations",
        "vehicleWaypoints", "attributes",
    ]
    static let requiredOnCreate = ["tripType", "pickupPoint"]

    /// UpdateTrip mask paths, both spellings, mapped to JSON fields.
    static let updatableFields: [String: String] = {
        let camel = [
            "vehicleId", "tripStatus", "pickupPoint", "actualPickupPoint", "actualPickupArrivalPoint",
            "intermediateDestinations", "intermediateDestinationIndex", "actualIntermediateDestinationArrivalPoints",
            "actualIntermediateDestinations", "dropoffPoint", "actualDropoffPoint", "vehicleWaypoints", "attributes",
            "tripType",
        ]
        var map: [String: String] = [:]
        for field in camel {
            map[field] = field
            map[VehicleSchema.snakeCase(field)] = field
        }
        return map
    }()

    /// Fields no update may change (output-only or immutable).
    static let immutableFields: Set<String> = {
        let camel = [
            "name", "pickupTime", "dropoffTime", "remainingWaypoints", "route", "currentRouteSegment",
            "currentRouteSegmentVersion", "currentRouteSegmentTraffic", "currentRouteSegmentTrafficVersion",
            "currentRouteSegmentEndPoint", "remainingDistanceMeters", "etaToFirstWaypoint",
            "remainingTimeToFirstWaypoint", "remainingWaypointsVersion", "remainingWaypointsRouteVersion",
            "numberOfPassengers", "lastLocation", "lastLocationSnappable", "view", "intermediateDestinationsVersion",
        ]
        return Set(camel + camel.map(VehicleSchema.snakeCase))
    }()

    static func isActive(_ status: String?) -> Bool { !terminalStatuses.contains(status ?? "NEW") }
}
