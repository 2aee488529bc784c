import FleetAuthServerCore
import FleetEngineAPI
import Foundation

/// The update masks of UpdateVehicle and UpdateTrip: which paths each accepts, and how each path is written.
/// Paths are accepted in proto spelling (`last_location`) and JSON spelling (`lastLocation`), as Google's REST
/// front end accepts both.
enum FieldMasks {
    /// `lastLocation` → `last_location`; proto spelling is left as it is.
    static func protoPath(_ path: String) -> String {
        // Every valid path is ASCII: spelled byte by byte, without Unicode's case tables (this ran on every update).
        if path.utf8.allSatisfy({ $0 < 0x80 }) {
            guard path.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return path }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(path.utf8.count + 4)
            for byte in path.utf8 {
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                    bytes.append(UInt8(ascii: "_"))
                    bytes.append(byte + 0x20)
                } else {
                    bytes.append(byte)
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        var result = ""
        for character in path {
            if character.isUppercase {
                result.append("_")
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The mask's paths in proto spelling; refuses an empty mask, unknown paths and fields that cannot change
    /// (`fixed`: each with the reason the refusal gives).
    static func paths(
        _ mask: [String],
        updatable: Set<String>,
        fixed: [String: String],
        message: String
    ) throws(GoogleAPIError) -> [String] {
        guard !mask.isEmpty else {
            throw .invalidArgument("updateMask is required and must list at least one field.")
        }
        var paths: [String] = []
        for raw in mask {
            let path = protoPath(Self.trimmed(raw))
            guard !path.isEmpty else {
                throw .invalidArgument(
                    "updateMask must list at least one field, separated by commas, without empty paths."
                )
            }
            if let reason = fixed[path] {
                throw .invalidArgument(
                    "updateMask path \"\(raw.prefix(64))\" names a field that cannot be updated (\(reason))."
                )
            }
            guard updatable.contains(path) else {
                throw .invalidArgument("updateMask path \"\(raw.prefix(64))\" is not a \(message) field.")
            }
            if !paths.contains(path) { paths.append(path) }
        }
        return paths
    }

    /// `raw` without leading and trailing whitespace; a path without any is returned as it is.
    static func trimmed(_ raw: String) -> String {
        guard let first = raw.utf8.first, let last = raw.utf8.last else { return raw }
        // Foundation's trimming only where an end is not a plain ASCII letter, digit or `_`.
        func plain(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        }
        return plain(first) && plain(last) ? raw : raw.trimmingCharacters(in: .whitespaces)
    }

    // MARK: Vehicle

    /// UpdateVehicle paths.
    static let vehicleUpdatable: Set<String> = [
        "vehicle_state", "supported_trip_types", "last_location", "past_locations", "maximum_capacity", "attributes",
        "vehicle_type", "license_plate", "route", "current_route_segment", "current_route_segment_traffic",
        "current_route_segment_end_point", "remaining_distance_meters", "eta_to_first_waypoint",
        "remaining_time_seconds", "waypoints", "back_to_back_enabled", "navigation_status", "device_settings",
    ]
    /// Vehicle fields an update may not name: the annotations' output-only fields, and `available_capacity`, which
    /// Fleet Engine derives from the trips (its comment: "the available capacity of the vehicle").
    static let vehicleFixed = FieldBehaviors.fixedFields(of: FleetEngineV1.Vehicle.self)
        .merging(["available_capacity": "derived from the vehicle's trips"]) { $1 }

    /// Writes the field at `path` of `source` into `target`.
    static func write(_ path: String, from source: FleetEngineV1.Vehicle, to target: inout FleetEngineV1.Vehicle) {
        switch path {
        case "vehicle_state": target.vehicleState = source.vehicleState
        case "supported_trip_types": target.supportedTripTypes = source.supportedTripTypes
        case "last_location":
            copy(\.lastLocation, has: source.hasLastLocation, source, &target) { $0.clearLastLocation() }
        case "past_locations": target.pastLocations = source.pastLocations
        case "maximum_capacity": target.maximumCapacity = source.maximumCapacity
        case "attributes": target.attributes = source.attributes
        case "vehicle_type": copy(\.vehicleType, has: source.hasVehicleType, source, &target) { $0.clearVehicleType() }
        case "license_plate":
            copy(\.licensePlate, has: source.hasLicensePlate, source, &target) { $0.clearLicensePlate() }
        case "route": target.route = source.route
        case "current_route_segment": target.currentRouteSegment = source.currentRouteSegment
        case "current_route_segment_traffic":
            copy(\.currentRouteSegmentTraffic, has: source.hasCurrentRouteSegmentTraffic, source, &target) {
                $0.clearCurrentRouteSegmentTraffic()
            }
        case "current_route_segment_end_point":
            copy(\.currentRouteSegmentEndPoint, has: source.hasCurrentRouteSegmentEndPoint, source, &target) {
                $0.clearCurrentRouteSegmentEndPoint()
            }
        case "remaining_distance_meters":
            copy(\.remainingDistanceMeters, has: source.hasRemainingDistanceMeters, source, &target) {
                $0.clearRemainingDistanceMeters()
            }
        case "eta_to_first_waypoint":
            copy(\.etaToFirstWaypoint, has: source.hasEtaToFirstWaypoint, source, &target) {
                $0.clearEtaToFirstWaypoint()
            }
        case "remaining_time_seconds":
            copy(\.remainingTimeSeconds, has: source.hasRemainingTimeSeconds, source, &target) {
                $0.clearRemainingTimeSeconds()
            }
        case "waypoints": target.waypoints = source.waypoints
        case "back_to_back_enabled": target.backToBackEnabled = source.backToBackEnabled
        case "navigation_status": target.navigationStatus = source.navigationStatus
        case "device_settings":
            copy(\.deviceSettings, has: source.hasDeviceSettings, source, &target) { $0.clearDeviceSettings() }
        default: preconditionFailure("\(path) passed the vehicle mask check but has no writer")
        }
    }

    // MARK: Trip

    /// UpdateTrip paths. `intermediate_destinations_version` is a precondition, not a write: the stored version
    /// must equal it.
    static let tripUpdatable: Set<String> = [
        "vehicle_id", "trip_status", "trip_type", "pickup_point", "actual_pickup_point",
        "actual_pickup_arrival_point", "intermediate_destinations", "intermediate_destinations_version",
        "intermediate_destination_index", "actual_intermediate_destination_arrival_points",
        "actual_intermediate_destinations", "dropoff_point", "actual_dropoff_point", "vehicle_waypoints", "attributes",
    ]
    /// Trip fields an update may not name: the annotations' output-only and immutable fields, and `view`, which
    /// says which fields an answer carries.
    static let tripFixed = FieldBehaviors.fixedFields(of: FleetEngineV1.Trip.self)
        .merging(["view": "it describes an answer"]) { $1 }

    /// Writes the field at `path` of `source` into `target` (`intermediate_destinations_version` writes nothing).
    static func write(_ path: String, from source: FleetEngineV1.Trip, to target: inout FleetEngineV1.Trip) {
        switch path {
        case "vehicle_id": target.vehicleID = source.vehicleID
        case "trip_status": target.tripStatus = source.tripStatus
        case "trip_type": target.tripType = source.tripType
        case "pickup_point": copy(\.pickupPoint, has: source.hasPickupPoint, source, &target) { $0.clearPickupPoint() }
        case "dropoff_point":
            copy(\.dropoffPoint, has: source.hasDropoffPoint, source, &target) { $0.clearDropoffPoint() }
        case "intermediate_destinations": target.intermediateDestinations = source.intermediateDestinations
        case "intermediate_destination_index": target.intermediateDestinationIndex = source.intermediateDestinationIndex
        case "vehicle_waypoints": target.vehicleWaypoints = source.vehicleWaypoints
        case "attributes": target.attributes = source.attributes
        // Input-only observations: checked, then not kept.
        case "actual_pickup_point", "actual_pickup_arrival_point", "actual_dropoff_point",
            "actual_intermediate_destination_arrival_points", "actual_intermediate_destinations",
            "intermediate_destinations_version":
            break
        default: preconditionFailure("\(path) passed the trip mask check but has no writer")
        }
    }

    private static func copy<Root, Value>(
        _ field: WritableKeyPath<Root, Value>,
        has: Bool,
        _ source: Root,
        _ target: inout Root,
        clear: (inout Root) -> Void
    ) {
        if has { target[keyPath: field] = source[keyPath: field] } else { clear(&target) }
    }
}
