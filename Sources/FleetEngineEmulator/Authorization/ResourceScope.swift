/// What a request touches, for matching against the token's `authorization` claims.
public struct ResourceScope: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case vehicle(String)
        case trip(String, assignedVehicleID: String?)
        case allVehicles
        case vehicleSearch(tripID: String?)
        case tripSearch(vehicleID: String?)
        case allTrips
    }

    let kind: Kind

    /// One vehicle (also a vehicle being created).
    public static func vehicle(_ id: String) -> Self { Self(kind: .vehicle(id)) }
    /// One trip, and the vehicle it is assigned to (a driver may act on the trips of its vehicle).
    public static func trip(_ id: String, assignedVehicleID: String?) -> Self {
        Self(kind: .trip(id, assignedVehicleID: assignedVehicleID))
    }
    /// Every vehicle of the provider (ListVehicles).
    public static let allVehicles = Self(kind: .allVehicles)
    /// A vehicle search, for the trip named in the request, if any.
    public static func vehicleSearch(tripID: String?) -> Self { Self(kind: .vehicleSearch(tripID: tripID)) }
    /// A trip search, for the vehicle named in the request, if any.
    public static func tripSearch(vehicleID: String?) -> Self { Self(kind: .tripSearch(vehicleID: vehicleID)) }
    /// Every trip of the provider (ReportBillableTrip).
    public static let allTrips = Self(kind: .allTrips)

    public var description: String {
        switch kind {
        case .vehicle(let id): "vehicle \(id)"
        case .trip(let id, _): "trip \(id)"
        case .allVehicles: "all vehicles"
        case .vehicleSearch: "a vehicle search"
        case .tripSearch(let vehicleID): vehicleID.map { "the trips of vehicle \($0)" } ?? "all trips"
        case .allTrips: "all trips"
        }
    }
}
