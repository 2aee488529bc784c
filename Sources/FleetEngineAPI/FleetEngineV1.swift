// Hand-written (not generated): short names for the generated maps.fleetengine.v1 types.

/// The types of Fleet Engine's `maps.fleetengine.v1` API under short names: `FleetEngineV1.Vehicle` is
/// `Maps_Fleetengine_V1_Vehicle`, generated from `Protos/google/maps/fleetengine/v1/vehicles.proto`.
public enum FleetEngineV1 {
    public typealias Vehicle = Maps_Fleetengine_V1_Vehicle
    public typealias VehicleState = Maps_Fleetengine_V1_VehicleState
    public typealias VehicleLocation = Maps_Fleetengine_V1_VehicleLocation
    public typealias VehicleAttribute = Maps_Fleetengine_V1_VehicleAttribute
    public typealias VehicleAttributeList = Maps_Fleetengine_V1_VehicleAttributeList
    public typealias VehicleMatch = Maps_Fleetengine_V1_VehicleMatch
    public typealias Waypoint = Maps_Fleetengine_V1_Waypoint
    public typealias Trip = Maps_Fleetengine_V1_Trip
    public typealias TripStatus = Maps_Fleetengine_V1_TripStatus
    public typealias TripType = Maps_Fleetengine_V1_TripType
    public typealias TripView = Maps_Fleetengine_V1_TripView
    public typealias TripWaypoint = Maps_Fleetengine_V1_TripWaypoint
    public typealias TripAttribute = Maps_Fleetengine_V1_TripAttribute
    public typealias TerminalLocation = Maps_Fleetengine_V1_TerminalLocation
    public typealias StopLocation = Maps_Fleetengine_V1_StopLocation
    public typealias WaypointType = Maps_Fleetengine_V1_WaypointType
    public typealias LatLng = Google_Type_LatLng
    public typealias Viewport = Google_Geo_Type_Viewport
    public typealias RequestHeader = Maps_Fleetengine_V1_RequestHeader

    public typealias CreateVehicleRequest = Maps_Fleetengine_V1_CreateVehicleRequest
    public typealias GetVehicleRequest = Maps_Fleetengine_V1_GetVehicleRequest
    public typealias DeleteVehicleRequest = Maps_Fleetengine_V1_DeleteVehicleRequest
    public typealias UpdateVehicleRequest = Maps_Fleetengine_V1_UpdateVehicleRequest
    public typealias UpdateVehicleAttributesRequest = Maps_Fleetengine_V1_UpdateVehicleAttributesRequest
    public typealias UpdateVehicleAttributesResponse = Maps_Fleetengine_V1_UpdateVehicleAttributesResponse
    public typealias ListVehiclesRequest = Maps_Fleetengine_V1_ListVehiclesRequest
    public typealias ListVehiclesResponse = Maps_Fleetengine_V1_ListVehiclesResponse
    public typealias SearchVehiclesRequest = Maps_Fleetengine_V1_SearchVehiclesRequest
    public typealias SearchVehiclesResponse = Maps_Fleetengine_V1_SearchVehiclesResponse
    public typealias CreateTripRequest = Maps_Fleetengine_V1_CreateTripRequest
    public typealias GetTripRequest = Maps_Fleetengine_V1_GetTripRequest
    public typealias DeleteTripRequest = Maps_Fleetengine_V1_DeleteTripRequest
    public typealias UpdateTripRequest = Maps_Fleetengine_V1_UpdateTripRequest
    public typealias SearchTripsRequest = Maps_Fleetengine_V1_SearchTripsRequest
    public typealias SearchTripsResponse = Maps_Fleetengine_V1_SearchTripsResponse
    public typealias ReportBillableTripRequest = Maps_Fleetengine_V1_ReportBillableTripRequest

    /// The gRPC service of vehicles (its client, server protocols and method descriptors).
    public typealias VehicleService = Maps_Fleetengine_V1_VehicleService
    /// The gRPC service of trips.
    public typealias TripService = Maps_Fleetengine_V1_TripService
    /// The RPCs of the vehicle service, free of any transport: its `Implementation` protocol and each RPC's name.
    public typealias VehicleServiceRPCs = Maps_Fleetengine_V1_VehicleServiceRPCs
    /// The RPCs of the trip service, free of any transport.
    public typealias TripServiceRPCs = Maps_Fleetengine_V1_TripServiceRPCs
}
