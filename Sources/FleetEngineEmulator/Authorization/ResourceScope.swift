/// What a request touches, for matching against the token's `authorization` claims.
public struct ResourceScope: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case vehicle(String)
        case trip(String, assignedVehicleID: String?)
        case allVehicles
        case vehicleSearch(tripID: String?)
        case tripSearch(vehicleID: String?)
        case allTrips
        case deliveryVehicle(String)
        case allDeliveryVehicles
        case task(String, assignedVehicleID: String?)
        case taskBatch([String])
        case allTasks
        case trackingID(String, taskIDs: [String])
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

    /// One delivery vehicle (also one being created).
    public static func deliveryVehicle(_ id: String) -> Self { Self(kind: .deliveryVehicle(id)) }
    /// Every delivery vehicle of the provider (ListDeliveryVehicles).
    public static let allDeliveryVehicles = Self(kind: .allDeliveryVehicles)
    /// One task, and the delivery vehicle it is assigned to (a trusted driver acts on its vehicle's tasks).
    public static func task(_ id: String, assignedVehicleID: String?) -> Self {
        Self(kind: .task(id, assignedVehicleID: assignedVehicleID))
    }
    /// The tasks of a BatchCreateTasks request.
    public static func taskBatch(_ ids: [String]) -> Self { Self(kind: .taskBatch(ids)) }
    /// Every task of the provider (ListTasks).
    public static let allTasks = Self(kind: .allTasks)
    /// The tracking information of a tracking ID, whose tasks have `taskIDs`.
    public static func trackingID(_ id: String, taskIDs: [String]) -> Self {
        Self(kind: .trackingID(id, taskIDs: taskIDs))
    }

    public var description: String {
        switch kind {
        case .vehicle(let id): "vehicle \(id)"
        case .trip(let id, _): "trip \(id)"
        case .allVehicles: "all vehicles"
        case .vehicleSearch: "a vehicle search"
        case .tripSearch(let vehicleID): vehicleID.map { "the trips of vehicle \($0)" } ?? "all trips"
        case .allTrips: "all trips"
        case .deliveryVehicle(let id): "delivery vehicle \(id)"
        case .allDeliveryVehicles: "all delivery vehicles"
        case .task(let id, _): "task \(id)"
        case .taskBatch(let ids): "tasks \(ids.prefix(5).joined(separator: ", "))\(ids.count > 5 ? ", …" : "")"
        case .allTasks: "all tasks"
        case .trackingID(let id, _): "tracking ID \(id)"
        }
    }
}
