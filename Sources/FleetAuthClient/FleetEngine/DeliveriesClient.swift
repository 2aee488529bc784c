public import FleetAuthCore
import Foundation

/// Fleet Engine's Deliveries API (`maps.fleetengine.delivery.v1`) over REST, as a delivery driver app, a shipment
/// tracking page or a backend calls it: the same token handling as ``FleetEngineClient`` (whose provider, base URL
/// and session it uses), with each call's token for the resource it touches.
///
/// ```swift
/// let deliveries = DeliveriesClient(client)
/// try await deliveries.updateDeliveryVehicleLocation("van-1", location: location)
/// let shipment = try await deliveries.getTaskTrackingInfo("parcel-42")
/// ```
public struct DeliveriesClient: Sendable {
    /// The client whose provider, tokens and session every call uses.
    public let client: FleetEngineClient

    public init(_ client: FleetEngineClient) { self.client = client }

    // MARK: Delivery vehicles

    /// CreateDeliveryVehicle (a backend or trusted driver call; the context is the vehicle's by default).
    @discardableResult
    public func createDeliveryVehicle(_ id: String, _ vehicle: JSONObject = [:], context: AuthorizationContext? = nil)
        async throws(FleetEngineClientError) -> JSONObject
    {
        try await client.send(
            "CreateDeliveryVehicle",
            "POST",
            try client.path("deliveryVehicles"),
            query: [URLQueryItem(name: "deliveryVehicleId", value: id)],
            body: vehicle,
            context: context ?? .deliveryVehicle(id)
        )
    }

    /// GetDeliveryVehicle, with the vehicle's token by default.
    public func getDeliveryVehicle(_ id: String, context: AuthorizationContext? = nil)
        async throws(FleetEngineClientError) -> JSONObject
    {
        try await client.send(
            "GetDeliveryVehicle",
            "GET",
            try client.path("deliveryVehicles", id),
            context: context ?? .deliveryVehicle(id)
        )
    }

    /// UpdateDeliveryVehicle: the fields of `vehicle` named by `updateMask`, with the vehicle's token by default.
    @discardableResult
    public func updateDeliveryVehicle(
        _ id: String,
        _ vehicle: JSONObject,
        updateMask: [String],
        context: AuthorizationContext? = nil
    ) async throws(FleetEngineClientError) -> JSONObject {
        try await client.send(
            "UpdateDeliveryVehicle",
            "PATCH",
            try client.path("deliveryVehicles", id),
            query: [URLQueryItem(name: "updateMask", value: updateMask.joined(separator: ","))],
            body: vehicle,
            context: context ?? .deliveryVehicle(id)
        )
    }

    /// The driver's location: all an untrusted driver's token may write.
    @discardableResult
    public func updateDeliveryVehicleLocation(_ id: String, location: VehicleLocation)
        async throws(FleetEngineClientError) -> JSONObject
    {
        try await updateDeliveryVehicle(
            id,
            ["lastLocation": .object(location.jsonObject)],
            updateMask: ["last_location"]
        )
    }

    /// The vehicle's remaining stops, every one (a trusted driver's or a backend's call): tasks named are assigned
    /// to the vehicle; its open tasks no longer named are closed.
    @discardableResult
    public func updateStops(_ id: String, _ stops: [DeliveryStop], context: AuthorizationContext? = nil)
        async throws(FleetEngineClientError) -> JSONObject
    {
        try await updateDeliveryVehicle(
            id,
            ["remainingVehicleJourneySegments": .array(stops.map { .object(["stop": .object($0.jsonObject)]) })],
            updateMask: ["remaining_vehicle_journey_segments"],
            context: context
        )
    }

    // MARK: Tasks

    /// CreateTask (a backend call by default: the context is the task's).
    @discardableResult
    public func createTask(_ id: String, _ task: JSONObject, context: AuthorizationContext? = nil)
        async throws(FleetEngineClientError) -> JSONObject
    {
        try await client.send(
            "CreateTask",
            "POST",
            try client.path("tasks"),
            query: [URLQueryItem(name: "taskId", value: id)],
            body: task,
            context: context ?? AuthorizationContext(taskID: id)
        )
    }

    /// BatchCreateTasks: every task or none (a backend call: the context is `taskid` `*` by default).
    @discardableResult
    public func batchCreateTasks(
        _ tasks: [(id: String, task: JSONObject)],
        context: AuthorizationContext = AuthorizationContext(taskID: "*")
    ) async throws(FleetEngineClientError) -> JSONObject {
        try await client.send(
            "BatchCreateTasks",
            "POST",
            try client.path("tasks") + ":batchCreate",
            body: ["requests": .array(tasks.map { .object(["taskId": .string($0.id), "task": .object($0.task)]) })],
            context: context
        )
    }

    /// GetTask, with the task's token by default.
    public func getTask(_ id: String, context: AuthorizationContext? = nil) async throws(FleetEngineClientError)
        -> JSONObject
    {
        try await client.send(
            "GetTask",
            "GET",
            try client.path("tasks", id),
            context: context ?? AuthorizationContext(taskID: id)
        )
    }

    /// UpdateTask with `taskOutcome`: how a closed task ended (set once).
    @discardableResult
    public func setTaskOutcome(_ id: String, _ outcome: TaskOutcome, context: AuthorizationContext? = nil)
        async throws(FleetEngineClientError) -> JSONObject
    {
        try await client.send(
            "UpdateTask",
            "PATCH",
            try client.path("tasks", id),
            query: [URLQueryItem(name: "updateMask", value: "task_outcome")],
            body: ["taskOutcome": .string(outcome.rawValue)],
            context: context ?? AuthorizationContext(taskID: id)
        )
    }

    /// ListTasks: one page, filtered (`state = OPEN AND delivery_vehicle_id = "van-1"`).
    public func listTasks(
        filter: String = "",
        pageSize: Int = 100,
        pageToken: String = "",
        context: AuthorizationContext = AuthorizationContext(taskID: "*")
    ) async throws(FleetEngineClientError) -> JSONObject {
        var query = [URLQueryItem(name: "pageSize", value: String(pageSize))]
        if !filter.isEmpty { query.append(URLQueryItem(name: "filter", value: filter)) }
        if !pageToken.isEmpty { query.append(URLQueryItem(name: "pageToken", value: pageToken)) }
        return try await client.send("ListTasks", "GET", try client.path("tasks"), query: query, context: context)
    }

    /// GetTaskTrackingInfo: what a consumer may see of a shipment, with the tracking ID's token by default.
    public func getTaskTrackingInfo(_ trackingID: String, context: AuthorizationContext? = nil)
        async throws(FleetEngineClientError) -> ShipmentSnapshot
    {
        ShipmentSnapshot(
            info: try await client.send(
                "GetTaskTrackingInfo",
                "GET",
                try client.path("taskTrackingInfo", trackingID),
                context: context ?? .tracking(trackingID)
            )
        )
    }
}

/// A stop of a delivery vehicle: where, which tasks are done there, and how far along the driver is.
public struct DeliveryStop: Sendable, Hashable {
    /// A stop's progress (`VehicleStop.State`).
    public enum State: String, Sendable, Hashable {
        case new = "NEW"
        case enroute = "ENROUTE"
        case arrived = "ARRIVED"
    }

    public var latitude: Double
    public var longitude: Double
    /// The tasks done at the stop, in order.
    public var taskIDs: [String]
    public var state: State

    public init(latitude: Double, longitude: Double, taskIDs: [String], state: State = .new) {
        self.latitude = latitude
        self.longitude = longitude
        self.taskIDs = taskIDs
        self.state = state
    }

    /// Fleet Engine's `VehicleStop` JSON.
    public var jsonObject: JSONObject {
        [
            "plannedLocation": ["point": ["latitude": .double(latitude), "longitude": .double(longitude)]],
            "tasks": .array(taskIDs.map { .object(["taskId": .string($0)]) }),
            "state": .string(state.rawValue),
        ]
    }
}

/// How a task ended (`Task.TaskOutcome`).
public enum TaskOutcome: String, Sendable, Hashable {
    case succeeded = "SUCCEEDED"
    case failed = "FAILED"
}
