import FleetAuthCore
import FleetAuthServerSupport

/// `maps.fleetengine.v1.Vehicle` and its parts, in the REST JSON mapping (Google's
/// [Vehicle reference](https://developers.google.com/maps/documentation/mobility/fleet-engine/reference/trips/rest/v1/providers.vehicles)).
enum VehicleSchema {
    static let vehicleStates = ["UNKNOWN_VEHICLE_STATE", "OFFLINE", "ONLINE"]
    static let tripTypes = ["UNKNOWN_TRIP_TYPE", "SHARED", "EXCLUSIVE"]
    static let categories = ["UNKNOWN", "AUTO", "TAXI", "TRUCK", "TWO_WHEELER", "BICYCLE", "PEDESTRIAN"]
    static let navigationStatuses = [
        "UNKNOWN_NAVIGATION_STATUS", "NO_GUIDANCE", "ENROUTE_TO_DESTINATION", "OFF_ROUTE", "ARRIVED_AT_DESTINATION",
    ]
    static let sensors = [
        "UNKNOWN_SENSOR", "GPS", "NETWORK", "PASSIVE", "ROAD_SNAPPED_LOCATION_PROVIDER", "CUSTOMER_SUPPLIED_LOCATION",
        "FLEET_ENGINE_LOCATION", "FUSED_LOCATION_PROVIDER", "CORE_LOCATION",
    ]

    static let location = MessageSchema(
        name: "VehicleLocation",
        fields: [
            "location": .message(.latLng), "horizontalAccuracy": .number(min: 0, max: .infinity),
            "latlngAccuracy": .number(min: 0, max: .infinity), "heading": .integer(min: 0, max: 359),
            "bearingAccuracy": .number(min: 0, max: .infinity), "headingAccuracy": .number(min: 0, max: .infinity),
            "altitude": .number(min: -.infinity, max: .infinity), "verticalAccuracy": .number(min: 0, max: .infinity),
            "altitudeAccuracy": .number(min: 0, max: .infinity), "speedKmph": .integer(min: 0, max: 2000),
            "speed": .number(min: 0, max: 1000), "speedAccuracy": .number(min: 0, max: .infinity),
            "updateTime": .timestamp, "serverTime": .timestamp, "locationSensor": .enumeration(sensors),
            "isRoadSnapped": .bool, "isGpsSensorEnabled": .bool, "timeSinceUpdate": .integer(min: 0, max: .max),
            "numStaleUpdates": .integer(min: 0, max: .max), "rawLocation": .message(.latLng),
            "rawLocationTime": .timestamp, "rawLocationSensor": .enumeration(sensors),
            "rawLocationAccuracy": .number(min: 0, max: .infinity), "flpLocation": .message(.latLng),
            "flpUpdateTime": .timestamp, "flpLatlngAccuracyMeters": .number(min: 0, max: .infinity),
            "flpHeadingDegrees": .integer(min: 0, max: 359), "supplementalLocation": .message(.latLng),
            "supplementalLocationTime": .timestamp, "supplementalLocationSensor": .enumeration(sensors),
            "supplementalLocationAccuracy": .number(min: 0, max: .infinity), "roadSnapped": .bool,
        ]
    )

    static let attribute = MessageSchema(
        name: "VehicleAttribute",
        fields: [
            "key": .string, "value": .string, "stringValue": .string, "boolValue": .bool,
            "numberValue": .number(min: -.infinity, max: .infinity),
        ]
    )

    static let vehicle = MessageSchema(
        name: "Vehicle",
        fields: [
            "name": .string, "vehicleState": .enumeration(vehicleStates),
            "supportedTripTypes": .repeated(.enumeration(tripTypes), maximumCount: 3),
            "currentTrips": .repeated(.string, maximumCount: 1000), "lastLocation": .message(location),
            "pastLocations": .repeated(.message(location), maximumCount: 1000),
            "maximumCapacity": .integer(min: 1, max: Int64(Int32.max)),
            "attributes": .repeated(.message(attribute), maximumCount: 100),
            "vehicleType": .message(MessageSchema(name: "VehicleType", fields: ["category": .enumeration(categories)])),
            "licensePlate": .message(
                MessageSchema(name: "LicensePlate", fields: ["countryCode": .string, "lastCharacter": .string])
            ),
            "route": .repeated(.any, maximumCount: 10_000), "currentRouteSegment": .string,
            "currentRouteSegmentTraffic": .any, "currentRouteSegmentVersion": .timestamp,
            "currentRouteSegmentEndPoint": .any, "remainingDistanceMeters": .integer(min: 0, max: Int64(Int32.max)),
            "etaToFirstWaypoint": .timestamp, "remainingTimeSeconds": .integer(min: 0, max: Int64(Int32.max)),
            "waypoints": .repeated(.any, maximumCount: 1000), "waypointsVersion": .timestamp,
            "backToBackEnabled": .bool, "navigationStatus": .enumeration(navigationStatuses), "deviceSettings": .any,
            "availableCapacity": .integer(min: 0, max: Int64(Int32.max)),
        ]
    )

    /// Fields the server sets; a request's values are ignored.
    static let outputOnly: Set<String> = [
        "name", "currentTrips", "availableCapacity", "currentRouteSegmentVersion", "waypointsVersion",
    ]
    /// Fields CreateVehicle ignores: output-only fields the server sets.
    static let ignoredOnCreate: Set<String> = outputOnly.union([
        "currentRouteSegment", "currentRouteSegmentEndPoint", "currentRouteSegmentTraffic", "route", "waypoints",
        "remainingDistanceMeters", "remainingTimeSeconds", "etaToFirstWaypoint", "navigationStatus",
    ])
    /// Fields CreateVehicle requires.
    static let requiredOnCreate = ["vehicleState", "supportedTripTypes", "maximumCapacity", "vehicleType"]
    /// Input-only fields: accepted, never returned.
    static let inputOnly: Set<String> = [
        "pastLocations", "currentRouteSegmentTraffic", "remainingTimeSeconds", "deviceSettings",
    ]

    /// The mask paths UpdateVehicle accepts, in both spellings, mapped to the JSON field.
    static let updatableFields: [String: String] = {
        let camel = [
            "vehicleState", "supportedTripTypes", "lastLocation", "pastLocations", "maximumCapacity", "attributes",
            "vehicleType", "licensePlate", "route", "currentRouteSegment", "currentRouteSegmentTraffic",
            "currentRouteSegmentEndPoint", "remainingDistanceMeters", "etaToFirstWaypoint", "remainingTimeSeconds",
            "waypoints", "backToBackEnabled", "navigationStatus", "deviceSettings",
        ]
        var map: [String: String] = [:]
        for field in camel {
            map[field] = field
            map[snakeCase(field)] = field
        }
        return map
    }()

    /// Fields that an update may not change.
    static let immutableFields: Set<String> = [
        "name", "currentTrips", "availableCapacity", "currentRouteSegmentVersion", "waypointsVersion",
        "current_trips", "available_capacity", "current_route_segment_version", "waypoints_version",
    ]

    static func snakeCase(_ camel: String) -> String { RequestReading.snakeCase(camel) }

    /// Checks the attributes rule: keys without `:`, one value each.
    static func validateAttributes(_ value: JSONValue?, path: String) throws(FleetEngineError) {
        guard case .array(let attributes)? = value else { return }
        for (index, attribute) in attributes.enumerated() {
            guard case .object(let object) = attribute else { continue }
            guard case .string(let key)? = object["key"], !key.isEmpty, !key.contains(":") else {
                throw .invalidArgument(
                    "Invalid value at '\(path)[\(index)].key': a non-empty key without ':' is required.")
            }
        }
    }
}
