import FleetAuthCore
import FleetEngineAPI

/// The Deliveries API's permission table: one entry for each RPC of `DeliveryService`, three for
/// UpdateDeliveryVehicle, whose mask decides the permission.
extension FleetEngineMethod {
    public static let createDeliveryVehicle = Self(
        Deliveries.CreateDeliveryVehicle.rpc,
        permission: .deliveryVehiclesCreate
    )
    public static let getDeliveryVehicle = Self(
        Deliveries.GetDeliveryVehicle.rpc,
        permission: .deliveryVehiclesGet
    )
    /// UpdateDeliveryVehicle with a mask of location and navigation fields: `deliveryvehicles.updateLocation`.
    public static let updateDeliveryVehicleLocation = Self(
        Deliveries.UpdateDeliveryVehicle.rpc,
        permission: .deliveryVehiclesUpdateLocation
    )
    /// UpdateDeliveryVehicle with `remaining_vehicle_journey_segments` in the mask:
    /// `deliveryvehicles.updateVehicleStops`.
    public static let updateDeliveryVehicleStops = Self(
        Deliveries.UpdateDeliveryVehicle.rpc,
        permission: .deliveryVehiclesUpdateVehicleStops
    )
    /// UpdateDeliveryVehicle with `attributes` or `type` in the mask: `deliveryvehicles.update`.
    public static let updateDeliveryVehicle = Self(
        Deliveries.UpdateDeliveryVehicle.rpc,
        permission: .deliveryVehiclesUpdate
    )
    public static let deleteDeliveryVehicle = Self(
        Deliveries.DeleteDeliveryVehicle.rpc,
        permission: .deliveryVehiclesDelete
    )
    public static let listDeliveryVehicles = Self(
        Deliveries.ListDeliveryVehicles.rpc,
        permission: .deliveryVehiclesList
    )
    public static let createTask = Self(Deliveries.CreateTask.rpc, permission: .tasksCreate)
    public static let batchCreateTasks = Self(Deliveries.BatchCreateTasks.rpc, permission: .tasksCreate)
    public static let getTask = Self(Deliveries.GetTask.rpc, permission: .tasksGet)
    public static let updateTask = Self(Deliveries.UpdateTask.rpc, permission: .tasksUpdate)
    public static let deleteTask = Self(Deliveries.DeleteTask.rpc, permission: .tasksDelete)
    public static let listTasks = Self(Deliveries.ListTasks.rpc, permission: .tasksList)
    public static let getTaskTrackingInfo = Self(
        Deliveries.GetTaskTrackingInfo.rpc,
        permission: .taskTrackingInfoGet
    )

    /// Every Deliveries entry.
    public static let deliveries: [FleetEngineMethod] = [
        .createDeliveryVehicle, .getDeliveryVehicle, .updateDeliveryVehicleLocation, .updateDeliveryVehicleStops,
        .updateDeliveryVehicle, .deleteDeliveryVehicle, .listDeliveryVehicles, .createTask, .batchCreateTasks, .getTask,
        .updateTask, .deleteTask, .listTasks, .getTaskTrackingInfo,
    ]

    /// Delivery vehicle fields a driver's app reports with `deliveryvehicles.updateLocation`, in proto spelling.
    public static let deliveryDriverReportableFields: Set<String> = [
        "last_location", "past_locations", "navigation_status", "current_route_segment",
        "current_route_segment_end_point", "remaining_distance_meters", "remaining_duration",
    ]
}
