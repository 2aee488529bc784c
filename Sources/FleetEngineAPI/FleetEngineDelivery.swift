// Hand-written (not generated): short names for the generated maps.fleetengine.delivery.v1 types.

/// The types of Fleet Engine's Deliveries API, `maps.fleetengine.delivery.v1`, under short names:
/// `FleetEngineDelivery.Task` is `Maps_Fleetengine_Delivery_V1_Task`, generated from
/// `Protos/google/maps/fleetengine/delivery/v1/tasks.proto`.
public enum FleetEngineDelivery {
    public typealias DeliveryVehicle = Maps_Fleetengine_Delivery_V1_DeliveryVehicle
    public typealias DeliveryVehicleLocation = Maps_Fleetengine_Delivery_V1_DeliveryVehicleLocation
    public typealias DeliveryVehicleAttribute = Maps_Fleetengine_Delivery_V1_DeliveryVehicleAttribute
    public typealias VehicleJourneySegment = Maps_Fleetengine_Delivery_V1_VehicleJourneySegment
    public typealias VehicleStop = Maps_Fleetengine_Delivery_V1_VehicleStop
    public typealias LocationInfo = Maps_Fleetengine_Delivery_V1_LocationInfo
    public typealias Task = Maps_Fleetengine_Delivery_V1_Task
    public typealias TaskAttribute = Maps_Fleetengine_Delivery_V1_TaskAttribute
    public typealias TaskTrackingViewConfig = Maps_Fleetengine_Delivery_V1_TaskTrackingViewConfig
    public typealias TaskTrackingInfo = Maps_Fleetengine_Delivery_V1_TaskTrackingInfo
    public typealias TimeWindow = Maps_Fleetengine_Delivery_V1_TimeWindow
    public typealias RequestHeader = Maps_Fleetengine_Delivery_V1_DeliveryRequestHeader

    public typealias CreateDeliveryVehicleRequest = Maps_Fleetengine_Delivery_V1_CreateDeliveryVehicleRequest
    public typealias GetDeliveryVehicleRequest = Maps_Fleetengine_Delivery_V1_GetDeliveryVehicleRequest
    public typealias DeleteDeliveryVehicleRequest = Maps_Fleetengine_Delivery_V1_DeleteDeliveryVehicleRequest
    public typealias UpdateDeliveryVehicleRequest = Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest
    public typealias ListDeliveryVehiclesRequest = Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesRequest
    public typealias ListDeliveryVehiclesResponse = Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesResponse
    public typealias CreateTaskRequest = Maps_Fleetengine_Delivery_V1_CreateTaskRequest
    public typealias BatchCreateTasksRequest = Maps_Fleetengine_Delivery_V1_BatchCreateTasksRequest
    public typealias BatchCreateTasksResponse = Maps_Fleetengine_Delivery_V1_BatchCreateTasksResponse
    public typealias GetTaskRequest = Maps_Fleetengine_Delivery_V1_GetTaskRequest
    public typealias DeleteTaskRequest = Maps_Fleetengine_Delivery_V1_DeleteTaskRequest
    public typealias UpdateTaskRequest = Maps_Fleetengine_Delivery_V1_UpdateTaskRequest
    public typealias ListTasksRequest = Maps_Fleetengine_Delivery_V1_ListTasksRequest
    public typealias ListTasksResponse = Maps_Fleetengine_Delivery_V1_ListTasksResponse
    public typealias GetTaskTrackingInfoRequest = Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest

    /// The gRPC service of delivery vehicles and tasks (its client, server protocols and method descriptors).
    public typealias DeliveryService = Maps_Fleetengine_Delivery_V1_DeliveryService
    /// The RPCs of the delivery service, free of any transport: its `Implementation` protocol and each RPC's name.
    public typealias DeliveryServiceRPCs = Maps_Fleetengine_Delivery_V1_DeliveryServiceRPCs
}
