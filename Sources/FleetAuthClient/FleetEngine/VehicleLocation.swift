public import FleetAuthCore
public import Foundation

/// A vehicle's position as the driver app reports it and Fleet Engine returns it (`VehicleLocation`).
public struct VehicleLocation: Sendable, Hashable {
    /// Degrees, −90 to 90.
    public var latitude: Double
    /// Degrees, −180 to 180.
    public var longitude: Double
    /// Direction of travel in whole degrees from north, 0–359.
    public var heading: Int?
    /// Metres per second.
    public var speed: Double?
    /// Radius of the 68 % confidence circle, in metres.
    public var horizontalAccuracy: Double?
    /// When the device measured it.
    public var time: Date?

    public init(
        latitude: Double,
        longitude: Double,
        heading: Int? = nil,
        speed: Double? = nil,
        horizontalAccuracy: Double? = nil,
        time: Date? = Date()
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.heading = heading
        self.speed = speed
        self.horizontalAccuracy = horizontalAccuracy
        self.time = time
    }

    /// Reads Fleet Engine's `VehicleLocation` JSON; `nil` without `location.latitude` and `location.longitude`.
    /// `time` is the `updateTime`, else the `serverTime`.
    public init?(json object: JSONObject) {
        guard let point = object["location"]?.objectValue, let latitude = point["latitude"]?.numberValue,
            let longitude = point["longitude"]?.numberValue
        else { return nil }
        self.latitude = latitude
        self.longitude = longitude
        heading = object["heading"]?.integerValue.map { Int($0) }
        speed = object["speed"]?.numberValue
        horizontalAccuracy = object["horizontalAccuracy"]?.numberValue
        time = (object["updateTime"] ?? object["serverTime"])?.stringValue.flatMap(RFC3339.parse)
    }

    /// Fleet Engine's `VehicleLocation` JSON. Invalid numbers are left for Fleet Engine to refuse; the heading is
    /// normalized into 0–359.
    public var jsonObject: JSONObject {
        var object: JSONObject = ["location": ["latitude": .double(latitude), "longitude": .double(longitude)]]
        if let heading { object["heading"] = .integer(Int64(((heading % 360) + 360) % 360)) }
        if let speed { object["speed"] = .double(speed) }
        if let horizontalAccuracy { object["horizontalAccuracy"] = .double(horizontalAccuracy) }
        if let time { object["updateTime"] = .string(RFC3339.format(time)) }
        return object
    }
}

/// Whether a vehicle takes trips.
public enum VehicleState: String, Sendable, Hashable {
    case online = "ONLINE"
    case offline = "OFFLINE"
}
