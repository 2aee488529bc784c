public import FleetAuthCore
public import Foundation

/// What a shipment tracking page shows at one moment: read from Fleet Engine's `TaskTrackingInfo`, where each value
/// is present only while the task's visibility settings show it.
public struct ShipmentSnapshot: Sendable, Hashable {
    public var trackingID: String
    /// `OPEN` or `CLOSED`.
    public var state: String
    /// `SUCCEEDED` or `FAILED` once the task has ended, else `nil`.
    public var outcome: TaskOutcome?
    /// Where the shipment is picked up or delivered.
    public var plannedLocation: (latitude: Double, longitude: Double)?
    /// The delivery vehicle's last location.
    public var vehicleLocation: VehicleLocation?
    /// Stops before and including the shipment's.
    public var remainingStopCount: Int?
    public var remainingDrivingDistanceMeters: Int?
    public var estimatedArrival: Date?
    public var estimatedCompletion: Date?
    /// The whole `TaskTrackingInfo` message as Fleet Engine returned it.
    public var info: JSONObject

    /// Reads a `TaskTrackingInfo`.
    public init(info: JSONObject) {
        self.info = info
        trackingID = info["trackingId"]?.stringValue ?? ""
        state = info["state"]?.stringValue ?? "STATE_UNSPECIFIED"
        outcome = info["taskOutcome"]?.stringValue.flatMap(TaskOutcome.init(rawValue:))
        if let point = info["plannedLocation"]?.objectValue?["point"]?.objectValue,
            let latitude = point["latitude"]?.numberValue, let longitude = point["longitude"]?.numberValue
        {
            plannedLocation = (latitude, longitude)
        }
        vehicleLocation = info["vehicleLocation"]?.objectValue.flatMap(VehicleLocation.init(json:))
        remainingStopCount = info["remainingStopCount"]?.integerValue.map { Int($0) }
        remainingDrivingDistanceMeters = info["remainingDrivingDistanceMeters"]?.integerValue.map { Int($0) }
        estimatedArrival = info["estimatedArrivalTime"]?.stringValue.flatMap(RFC3339.parse)
        estimatedCompletion = info["estimatedTaskCompletionTime"]?.stringValue.flatMap(RFC3339.parse)
    }

    /// Whether the shipment's task has closed: nothing about it changes any more.
    public var isFinished: Bool { state == "CLOSED" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.info == rhs.info }
    public func hash(into hasher: inout Hasher) { hasher.combine(info) }
}
