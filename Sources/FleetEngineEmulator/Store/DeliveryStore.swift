public import FleetEngineAPI

/// Where the emulator keeps the Deliveries API's delivery vehicles and tasks: each as its
/// `maps.fleetengine.delivery.v1` message (without its `name`), keyed by provider and ID. A task's assigned vehicle,
/// state and tracking ID are read from the message and indexed, so "the open tasks of a vehicle" and "the tasks of a
/// tracking ID" are queries, never copies that could disagree.
///
/// Every method is atomic, as ``FleetStore``'s are: an update reads, transforms and writes in one transaction, and
/// a transform's error is rethrown with nothing written. Failures are `StoreError`s (`not_found`, `already_exists`,
/// `conflict`). Both of the project's stores conform, sharing the database of the on-demand half.
public protocol DeliveryStore: Sendable {
    /// A delivery vehicle, or nil.
    func deliveryVehicle(provider: String, id: String) async throws -> FleetEngineDelivery.DeliveryVehicle?
    /// Stores a new delivery vehicle; `already_exists` if the ID is taken.
    func insertDeliveryVehicle(_ vehicle: FleetEngineDelivery.DeliveryVehicle, provider: String, id: String)
        async throws
    /// Replaces a delivery vehicle and the tasks its change touches, in one transaction. `transform` is given the
    /// vehicle, and by ID every task that is OPEN and assigned to it and every existing task among `taskIDs`; it
    /// returns the new vehicle and the tasks to write. `not_found` if there is no such vehicle.
    func updateDeliveryVehicle(
        provider: String,
        id: String,
        naming taskIDs: Set<String>,
        _ transform:
            @escaping @Sendable (FleetEngineDelivery.DeliveryVehicle, [String: FleetEngineDelivery.Task])
            throws -> DeliveryVehicleChange
    ) async throws -> FleetEngineDelivery.DeliveryVehicle
    /// Deletes a delivery vehicle; `not_found`, or `conflict` while an OPEN task is assigned to it.
    func deleteDeliveryVehicle(provider: String, id: String) async throws
    /// Delivery vehicles in ID order after `afterID`, at most `limit`.
    func deliveryVehicles(provider: String, afterID: String?, limit: Int) async throws -> [StoredDeliveryVehicle]

    /// A task, or nil.
    func task(provider: String, id: String) async throws -> FleetEngineDelivery.Task?
    /// Stores new tasks, all or none: `already_exists` naming the first task whose ID is taken.
    func insertTasks(_ tasks: [StoredTask], provider: String) async throws
    /// Replaces a task with `transform(current)`; `not_found` if there is none.
    func updateTask(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineDelivery.Task) throws -> FleetEngineDelivery.Task
    ) async throws -> FleetEngineDelivery.Task
    /// Deletes a task; `not_found`, or `conflict` while it is OPEN and assigned to a vehicle.
    func deleteTask(provider: String, id: String) async throws
    /// Tasks in ID order after `afterID`, at most `limit`.
    func tasks(provider: String, afterID: String?, limit: Int) async throws -> [StoredTask]
    /// The tasks with a tracking ID, in ID order.
    func tasks(provider: String, trackingID: String) async throws -> [StoredTask]
}

/// What an UpdateDeliveryVehicle writes: the vehicle, and the tasks it assigned or closed (by ID).
public struct DeliveryVehicleChange: Sendable {
    public var vehicle: FleetEngineDelivery.DeliveryVehicle
    public var tasks: [String: FleetEngineDelivery.Task]

    public init(vehicle: FleetEngineDelivery.DeliveryVehicle, tasks: [String: FleetEngineDelivery.Task] = [:]) {
        self.vehicle = vehicle
        self.tasks = tasks
    }
}

/// A delivery vehicle as stored, with its ID.
public struct StoredDeliveryVehicle: Sendable, Hashable {
    public var id: String
    public var vehicle: FleetEngineDelivery.DeliveryVehicle

    public init(id: String, vehicle: FleetEngineDelivery.DeliveryVehicle) {
        self.id = id
        self.vehicle = vehicle
    }
}

/// A task as stored, with its ID.
public struct StoredTask: Sendable, Hashable {
    public var id: String
    public var task: FleetEngineDelivery.Task

    public init(id: String, task: FleetEngineDelivery.Task) {
        self.id = id
        self.task = task
    }

    /// The indexed values: the assigned vehicle, whether the task is OPEN, the tracking ID.
    var vehicleID: String? { task.deliveryVehicleID.isEmpty ? nil : task.deliveryVehicleID }
    var isOpen: Bool { task.state != .closed }
    var trackingID: String? { task.trackingID.isEmpty ? nil : task.trackingID }
}
