import FleetAuthCore

extension FleetEngineMethod {
    public static let createDeliveryVehicle = Self(
        name: "CreateDeliveryVehicle",
        permission: .deliveryVehiclesCreate
    )
    public static let getDeliveryVehicle = Self(name: "GetDeliveryVehicle", permission: .deliveryVehiclesGet)
    /// UpdateDeliveryVehicle with a mask of location and navigation fields: `deliveryvehicles.updateLocation`.
    public static let updateDeliveryVehicleLocation = Self(
        name: "UpdateDeliveryVehicle",
        permission: .deliveryVehiclesUpdateLocation
    )
    /// UpdateDeliveryVehicle with `remaining_vehicle_journey_segments` in the mask:
    /// `deliveryvehicles.updateVehicleStops`.
    public static let updateDeliveryVehicleStops = Self(
        name: "UpdateDeliveryVehicle",
        permission: .deliveryVehiclesUpdateVehicleStops
    )
    /// UpdateDeliveryVehicle with `attributes` or `type` in the mask: `deliveryvehicles.update`.
    public static let updateDeliveryVehicle = Self(name: "UpdateDeliveryVehicle", permission: .deliveryVehiclesUpdate)
    public static let deleteDeliveryVehicle = Self(
        name: "DeleteDeliveryVehicle",
        permission: .deliveryVehiclesDelete
    )
    public static let listDeliveryVehicles = Self(name: "ListDeliveryVehicles", permission: .deliveryVehiclesList)
    public static let createTask = Self(name: "CreateTask", permission: .tasksCreate)
    public static let batchCreateTasks = Self(name: "BatchCreateTasks", permission: .tasksCreate)
    public static let getTask = Self(name: "GetTask", permission: .tasksGet)
    public static let updateTask = Self(name: "UpdateTask", permission: .tasksUpdate)
    public static let deleteTask = Self(name: "DeleteTask", permission: .tasksDelete)
    public static let listTasks = Self(name: "ListTasks", permission: .tasksList)
    public static let getTaskTrackingInfo = Self(name: "GetTaskTrackingInfo", permission: .taskTrackingInfoGet)

    /// Delivery vehicle fields a driver's app reports with `deliveryvehicles.updateLocation`, in proto spelling.
    public static let deliveryDriverReportableFields: Set<String> = [
        "last_location", "past_locations", "navigation_status", "current_route_segment",
        "current_route_segment_end_point", "remaining_distance_meters", "remaining_duration",
    ]
}
