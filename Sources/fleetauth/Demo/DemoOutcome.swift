import FleetAuthClient

/// How a driver app's run ended.
struct DriverOutcome: Sendable {
    let vehicleID: String
    /// The last location it reported.
    let lastLocation: VehicleLocation?
    let tripsDone: Int
    let tripsPlanned: Int
}

/// How a consumer app's run ended.
struct ConsumerOutcome: Sendable {
    let tripID: String
    /// Every status it saw, in order, without repeats.
    let statuses: [TripStatus]
    let sawVehicle: Bool
    let sawWaypoints: Bool
    /// Why it stopped following the trip, if it failed.
    let error: String?
}

/// What the simulated apps did.
struct DemoOutcome: Sendable {
    var drivers: [DriverOutcome] = []
    var consumers: [ConsumerOutcome] = []
}
