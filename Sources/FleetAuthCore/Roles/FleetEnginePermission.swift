/// An IAM permission, such as `fleetengine.vehicles.updateLocation`.
public struct FleetEnginePermission: Sendable, Hashable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The permission's full name.
    public let name: String

    public init(_ name: String) { self.name = name }
    public init(stringLiteral name: String) { self.name = name }

    public var description: String { name }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.name < rhs.name }

    // On-demand vehicles.
    public static let vehiclesCreate: Self = "fleetengine.vehicles.create"
    public static let vehiclesGet: Self = "fleetengine.vehicles.get"
    public static let vehiclesUpdate: Self = "fleetengine.vehicles.update"
    public static let vehiclesUpdateLocation: Self = "fleetengine.vehicles.updateLocation"
    public static let vehiclesDelete: Self = "fleetengine.vehicles.delete"
    public static let vehiclesList: Self = "fleetengine.vehicles.list"
    public static let vehiclesSearch: Self = "fleetengine.vehicles.search"
    public static let vehiclesSearchFuzzed: Self = "fleetengine.vehicles.searchFuzzed"
    public static let vehiclesAllowAllActions: Self = "fleetengine.vehicles.allowAllActions"
    // On-demand trips.
    public static let tripsCreate: Self = "fleetengine.trips.create"
    public static let tripsGet: Self = "fleetengine.trips.get"
    public static let tripsUpdate: Self = "fleetengine.trips.update"
    public static let tripsUpdateState: Self = "fleetengine.trips.updateState"
    public static let tripsDelete: Self = "fleetengine.trips.delete"
    public static let tripsSearch: Self = "fleetengine.trips.search"
    public static let tripsAllowAllActions: Self = "fleetengine.trips.allowAllActions"
    // Delivery vehicles.
    public static let deliveryVehiclesCreate: Self = "fleetengine.deliveryvehicles.create"
    public static let deliveryVehiclesGet: Self = "fleetengine.deliveryvehicles.get"
    public static let deliveryVehiclesUpdate: Self = "fleetengine.deliveryvehicles.update"
    public static let deliveryVehiclesUpdateLocation: Self = "fleetengine.deliveryvehicles.updateLocation"
    public static let deliveryVehiclesUpdateVehicleStops: Self = "fleetengine.deliveryvehicles.updateVehicleStops"
    public static let deliveryVehiclesDelete: Self = "fleetengine.deliveryvehicles.delete"
    public static let deliveryVehiclesList: Self = "fleetengine.deliveryvehicles.list"
    // Tasks and tracking.
    public static let tasksCreate: Self = "fleetengine.tasks.create"
    public static let tasksGet: Self = "fleetengine.tasks.get"
    public static let tasksUpdate: Self = "fleetengine.tasks.update"
    public static let tasksDelete: Self = "fleetengine.tasks.delete"
    public static let tasksList: Self = "fleetengine.tasks.list"
    public static let tasksSearchWithTrackingID: Self = "fleetengine.tasks.searchWithTrackingId"
    public static let taskTrackingInfoGet: Self = "fleetengine.tasktrackinginfo.get"
    // Outside Fleet Engine, granted by the super-user role.
    public static let projectsGet: Self = "resourcemanager.projects.get"
    public static let projectsList: Self = "resourcemanager.projects.list"
}
