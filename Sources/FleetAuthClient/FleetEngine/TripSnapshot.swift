public import FleetAuthCore

/// What a consumer app shows of a trip at one moment: read from Fleet Engine's `Trip`.
public struct TripSnapshot: Sendable, Hashable {
    public var tripID: String
    public var status: TripStatus
    /// The vehicle assigned to the trip, if any.
    public var vehicleID: String?
    /// The assigned vehicle's last reported location, while the trip is active.
    public var vehicleLocation: VehicleLocation?
    /// The stops still ahead, in order.
    public var remainingWaypoints: [TripWaypoint]
    /// The whole `Trip` message as Fleet Engine returned it.
    public var trip: JSONObject

    /// Reads a `Trip`; the ID comes from `name` (`providers/P/trips/ID`).
    public init(trip: JSONObject) {
        self.trip = trip
        let name = trip["name"]?.stringValue ?? ""
        tripID = name.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        status = TripStatus(rawValue: trip["tripStatus"]?.stringValue ?? TripStatus.unknown.rawValue)
        vehicleID = trip["vehicleId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        vehicleLocation = trip["lastLocation"]?.objectValue.flatMap(VehicleLocation.init(json:))
        remainingWaypoints = (trip["remainingWaypoints"]?.arrayValue ?? []).compactMap {
            $0.objectValue.flatMap(TripWaypoint.init(json:))
        }
    }

    /// Whether the trip has ended (complete or cancelled): nothing about it changes any more.
    public var isFinished: Bool { status == .complete || status == .canceled }
}

/// A trip's status (`TripStatus`); values this version does not know are kept as they are.
public struct TripStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let unknown = Self(rawValue: "UNKNOWN_TRIP_STATUS")
    public static let new = Self(rawValue: "NEW")
    public static let enrouteToPickup = Self(rawValue: "ENROUTE_TO_PICKUP")
    public static let arrivedAtPickup = Self(rawValue: "ARRIVED_AT_PICKUP")
    public static let arrivedAtIntermediateDestination = Self(rawValue: "ARRIVED_AT_INTERMEDIATE_DESTINATION")
    public static let enrouteToIntermediateDestination = Self(rawValue: "ENROUTE_TO_INTERMEDIATE_DESTINATION")
    public static let enrouteToDropoff = Self(rawValue: "ENROUTE_TO_DROPOFF")
    public static let complete = Self(rawValue: "COMPLETE")
    public static let canceled = Self(rawValue: "CANCELED")

    public var description: String { rawValue }
}

/// A stop of a trip still to be visited.
public struct TripWaypoint: Sendable, Hashable {
    /// `PICKUP_WAYPOINT_TYPE`, `DROP_OFF_WAYPOINT_TYPE` or `INTERMEDIATE_DESTINATION_WAYPOINT_TYPE`.
    public var type: String
    public var latitude: Double
    public var longitude: Double
    /// Distance from the vehicle along the remaining stops, when Fleet Engine states it.
    public var distanceMeters: Int?

    public init(type: String, latitude: Double, longitude: Double, distanceMeters: Int? = nil) {
        self.type = type
        self.latitude = latitude
        self.longitude = longitude
        self.distanceMeters = distanceMeters
    }

    /// Reads a `TripWaypoint` (`location.point.latitude/longitude`, `waypointType`, `distanceMeters`).
    public init?(json object: JSONObject) {
        guard let point = object["location"]?.objectValue?["point"]?.objectValue,
            let latitude = point["latitude"]?.numberValue, let longitude = point["longitude"]?.numberValue
        else { return nil }
        self.init(
            type: object["waypointType"]?.stringValue ?? "UNKNOWN_WAYPOINT_TYPE",
            latitude: latitude,
            longitude: longitude,
            distanceMeters: object["distanceMeters"]?.integerValue.map { Int($0) }
        )
    }
}
