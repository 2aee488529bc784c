import FleetAuthCore
import FleetEngineAPI

/// The on-demand API's permission table: one entry for each RPC of `VehicleService` and `TripService`, two where the
/// mask decides which permission an update needs.
extension FleetEngineMethod {
    public static let createVehicle = Self(Vehicles.CreateVehicle.rpc, permission: .vehiclesCreate)
    public static let getVehicle = Self(Vehicles.GetVehicle.rpc, permission: .vehiclesGet)
    /// UpdateVehicle with a mask of driver-reportable fields only: `vehicles.updateLocation` is enough.
    public static let updateVehicleLocation = Self(
        Vehicles.UpdateVehicle.rpc,
        permission: .vehiclesUpdateLocation
    )
    /// UpdateVehicle with any other field in the mask: `vehicles.update`.
    public static let updateVehicle = Self(Vehicles.UpdateVehicle.rpc, permission: .vehiclesUpdate)
    public static let updateVehicleAttributes = Self(
        Vehicles.UpdateVehicleAttributes.rpc,
        permission: .vehiclesUpdate
    )
    public static let listVehicles = Self(Vehicles.ListVehicles.rpc, permission: .vehiclesList)
    public static let deleteVehicle = Self(Vehicles.DeleteVehicle.rpc, permission: .vehiclesDelete)
    public static let searchVehicles = Self(Vehicles.SearchVehicles.rpc, permission: .vehiclesSearch)
    public static let createTrip = Self(Trips.CreateTrip.rpc, permission: .tripsCreate)
    public static let getTrip = Self(Trips.GetTrip.rpc, permission: .tripsGet)
    public static let updateTrip = Self(Trips.UpdateTrip.rpc, permission: .tripsUpdate)
    /// UpdateTrip whose mask changes `trip_status`: also needs `trips.updateState` (policy: the stricter reading where
    /// Google's documentation is silent; see <doc:AuthorizationModel>).
    public static let updateTripState = Self(Trips.UpdateTrip.rpc, permission: .tripsUpdateState)
    public static let deleteTrip = Self(Trips.DeleteTrip.rpc, permission: .tripsDelete)
    public static let searchTrips = Self(Trips.SearchTrips.rpc, permission: .tripsSearch)
    /// ReportBillableTrip, which no published role names: a backend call, so `trips.create` (policy; see
    /// <doc:AuthorizationModel>).
    public static let reportBillableTrip = Self(Trips.ReportBillableTrip.rpc, permission: .tripsCreate)

    /// Every on-demand entry.
    public static let onDemand: [FleetEngineMethod] = [
        .createVehicle, .getVehicle, .updateVehicleLocation, .updateVehicle, .updateVehicleAttributes, .listVehicles,
        .deleteVehicle, .searchVehicles, .createTrip, .getTrip, .updateTrip, .updateTripState, .deleteTrip,
        .searchTrips, .reportBillableTrip,
    ]

    /// Vehicle fields a driver (`vehicles.updateLocation`) may report through UpdateVehicle, in proto spelling:
    /// location, state, route progress and waypoints (<doc:AuthorizationModel>). Any other field in the mask needs `vehicles.update`.
    public static let driverReportableVehicleFields: Set<String> = [
        "last_location", "past_locations", "vehicle_state", "current_route_segment",
        "current_route_segment_end_point", "current_route_segment_traffic", "remaining_distance_meters",
        "remaining_time_seconds", "eta_to_first_waypoint", "navigation_status", "device_settings", "waypoints",
    ]
}
