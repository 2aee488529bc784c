public import FleetAuthCore

/// A Fleet Engine RPC and the IAM permission it needs (<doc:AuthorizationModel>).
public struct FleetEngineMethod: Sendable, Hashable, CustomStringConvertible {
    /// The RPC name, such as `UpdateVehicle`.
    public let name: String
    /// The permission the signing account's role must grant.
    public let permission: FleetEnginePermission

    public var description: String { name }

    public static let createVehicle = Self(name: "CreateVehicle", permission: .vehiclesCreate)
    public static let getVehicle = Self(name: "GetVehicle", permission: .vehiclesGet)
    /// UpdateVehicle with a mask of driver-reportable fields only: `vehicles.updateLocation` is enough.
    public static let updateVehicleLocation = Self(name: "UpdateVehicle", permission: .vehiclesUpdateLocation)
    /// UpdateVehicle with any other field in the mask: `vehicles.update`.
    public static let updateVehicle = Self(name: "UpdateVehicle", permission: .vehiclesUpdate)
    public static let updateVehicleAttributes = Self(name: "UpdateVehicleAttributes", permission: .vehiclesUpdate)
    public static let listVehicles = Self(name: "ListVehicles", permission: .vehiclesList)
    public static let deleteVehicle = Self(name: "DeleteVehicle", permission: .vehiclesDelete)
    public static let searchVehicles = Self(name: "SearchVehicles", permission: .vehiclesSearch)
    public static let createTrip = Self(name: "CreateTrip", permission: .tripsCreate)
    public static let getTrip = Self(name: "GetTrip", permission: .tripsGet)
    public static let updateTrip = Self(name: "UpdateTrip", permission: .tripsUpdate)
    /// UpdateTrip whose mask changes `trip_status`: also needs `trips.updateState` (policy: the stricter reading where
    /// Google's documentation is silent; see <doc:AuthorizationModel>).
    public static let updateTripState = Self(name: "UpdateTrip", permission: .tripsUpdateState)
    public static let deleteTrip = Self(name: "DeleteTrip", permission: .tripsDelete)
    public static let searchTrips = Self(name: "SearchTrips", permission: .tripsSearch)
    /// ReportBillableTrip, which no published role names: a backend call, so `trips.create` (policy; see
    /// <doc:AuthorizationModel>).
    public static let reportBillableTrip = Self(name: "ReportBillableTrip", permission: .tripsCreate)

    /// Vehicle fields a driver (`vehicles.updateLocation`) may report through UpdateVehicle, in proto spelling:
    /// location, state, route progress and waypoints (<doc:AuthorizationModel>). Any other field in the mask needs `vehicles.update`.
    public static let driverReportableVehicleFields: Set<String> = [
        "last_location", "past_locations", "vehicle_state", "current_route_segment",
        "current_route_segment_end_point", "current_route_segment_traffic", "remaining_distance_meters",
        "remaining_time_seconds", "eta_to_first_waypoint", "navigation_status", "device_settings", "waypoints",
    ]
}
