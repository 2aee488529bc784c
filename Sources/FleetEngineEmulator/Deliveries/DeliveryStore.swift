package import FleetAuthServerCore
package import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// Where the emulator keeps the Deliveries API's delivery vehicles and tasks: each as its
/// `maps.fleetengine.delivery.v1` message (without its `name`), keyed by provider and ID. A task's assigned vehicle,
/// state and tracking ID are read from the message and indexed, so "the open tasks of a vehicle" and "the tasks of a
/// tracking ID" are queries, never copies that could disagree.
///
/// Every method is atomic, as ``OnDemandStore``'s are: an update reads, transforms and writes in one transaction, and
/// a transform's error is rethrown with nothing written. Failures are `StoreError`s (`not_found`, `already_exists`,
/// `conflict`). Both of the project's stores conform, sharing the database of the on-demand half.
package protocol DeliveryStore: Sendable {
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
    /// The delivery vehicles `query` accepts, in ID order after `afterID`, at most `limit`, and, when `counting`,
    /// how many match on every page, from the store's indexes: the vehicles ``DeliveryVehicleQuery/accepts(_:)``
    /// accepts.
    func deliveryVehicles(
        provider: String,
        matching query: DeliveryVehicleQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (vehicles: [StoredDeliveryVehicle], total: Int?)

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
    /// The tasks `query` accepts, in ID order after `afterID`, at most `limit`, and, when `counting`, how many match
    /// on every page, from the store's indexes: the tasks ``TaskQuery/accepts(_:)`` accepts.
    func tasks(provider: String, matching query: TaskQuery, after afterID: String?, limit: Int, counting: Bool)
        async throws -> (tasks: [StoredTask], total: Int?)
}

/// Which tasks a ListTasks reads: its filter, which a store turns into a query on its task columns.
package struct TaskQuery: Sendable {
    let filter: AIPFilter

    /// A ListTasks `filter` (<doc:Deliveries>); `INVALID_ARGUMENT` if it does not parse.
    package init(filter: String) throws(GoogleAPIError) {
        self.filter = try AIPFilter(filter, fields: DeliveryService.taskFilterFields, describing: "tasks")
    }

    /// Whether `task` matches: the meaning of the query, which a store's indexes must reproduce.
    package func accepts(_ task: FleetEngineDelivery.Task) -> Bool {
        filter.matches { DeliveryService.value(of: $0, in: task) }
    }
}

/// Which delivery vehicles a ListDeliveryVehicles reads: its attribute filter and viewport.
package struct DeliveryVehicleQuery: Sendable {
    let filter: AIPFilter
    /// The last location lies in one of these boxes (any location, or none, when nil).
    let area: [VehicleQuery.Box]?

    /// A ListDeliveryVehicles `filter` and `viewport` (nil for none); `INVALID_ARGUMENT` if either is malformed.
    package init(filter: String, viewport: FleetEngineV1.Viewport?) throws(GoogleAPIError) {
        self.filter = try AIPFilter(filter, fields: [:], describing: "delivery vehicles")
        area = try viewport.map(VehicleQuery.Box.checked)
    }

    /// Whether `vehicle` matches: the meaning of the query, which a store's indexes must reproduce.
    package func accepts(_ vehicle: FleetEngineDelivery.DeliveryVehicle) -> Bool {
        let row = DeliveryVehicleRow(vehicle)
        if let area {
            guard let latitude = row.latitude, let longitude = row.longitude,
                area.contains(where: { $0.contains(latitude: latitude, longitude: longitude) })
            else { return false }
        }
        return filter.matches { field in
            row.attributes[String(field.dropFirst("attributes.".count))].map { .string($0) } ?? .absent
        }
    }
}

/// The values a store indexes for one task, derived from its message.
struct TaskRow {
    var state: Int64
    var type: Int64
    var outcome: Int64
    /// Seconds since 1970, as the filter compares `task_outcome_time`.
    var outcomeTime: Double?
    var latitude: Double?
    var longitude: Double?
    /// String forms by key; the first of a repeated key (as the filter reads them).
    var attributes: [String: String]

    init(_ task: FleetEngineDelivery.Task) {
        state = Int64(task.state.rawValue)
        type = Int64(task.type.rawValue)
        outcome = Int64(task.taskOutcome.rawValue)
        outcomeTime = task.hasTaskOutcomeTime ? task.taskOutcomeTime.date.timeIntervalSince1970 : nil
        if task.plannedLocation.hasPoint {
            latitude = task.plannedLocation.point.latitude
            longitude = task.plannedLocation.point.longitude
        }
        attributes = [:]
        for attribute in task.attributes where attributes[attribute.key] == nil {
            attributes[attribute.key] = attribute.taskAttributeValue.map(DeliveryChecks.string) ?? ""
        }
    }

    /// Where ListTasks' filter fields are kept, in both stores' `tasks` tables.
    static let columns: [String: FilterSQL.Column] = [
        "state": .integer("state"),
        "type": .integer("type"),
        "task_outcome": .integer("outcome"),
        "delivery_vehicle_id": .text("vehicle_id"),
        "tracking_id": .text("tracking_id"),
        "task_outcome_time": .real("outcome_time"),
        "planned_location.point.latitude": .real("lat"),
        "planned_location.point.longitude": .real("lng"),
    ]

    /// The columns each of a task's attribute rows also holds, in both stores: the enums a filter pairs with an
    /// attribute (`state = OPEN AND attributes.zone = "north"`), so that such a count reads one index range.
    static let carriedColumns = ["state", "type", "outcome"]
    var carriedValues: [SQLValue] { [.integer(state), .integer(type), .integer(outcome)] }
}

/// The values a store indexes for one delivery vehicle, derived from its message.
struct DeliveryVehicleRow {
    var latitude: Double?
    var longitude: Double?
    /// String forms by key; the last of a repeated key.
    var attributes: [String: String]

    init(_ vehicle: FleetEngineDelivery.DeliveryVehicle) {
        if vehicle.hasLastLocation, vehicle.lastLocation.hasLocation {
            latitude = vehicle.lastLocation.location.latitude
            longitude = vehicle.lastLocation.location.longitude
        }
        attributes = [:]
        for attribute in vehicle.attributes {
            attributes[attribute.key] =
                attribute.deliveryVehicleAttributeValue.map(DeliveryChecks.string) ?? attribute.value
        }
    }
}

/// What an UpdateDeliveryVehicle writes: the vehicle, and the tasks it assigned or closed (by ID).
package struct DeliveryVehicleChange: Sendable {
    package var vehicle: FleetEngineDelivery.DeliveryVehicle
    package var tasks: [String: FleetEngineDelivery.Task]

    package init(vehicle: FleetEngineDelivery.DeliveryVehicle, tasks: [String: FleetEngineDelivery.Task] = [:]) {
        self.vehicle = vehicle
        self.tasks = tasks
    }
}

/// A delivery vehicle as stored, with its ID.
package struct StoredDeliveryVehicle: Sendable, Hashable {
    package var id: String
    package var vehicle: FleetEngineDelivery.DeliveryVehicle

    package init(id: String, vehicle: FleetEngineDelivery.DeliveryVehicle) {
        self.id = id
        self.vehicle = vehicle
    }
}

/// A task as stored, with its ID.
package struct StoredTask: Sendable, Hashable {
    package var id: String
    package var task: FleetEngineDelivery.Task

    package init(id: String, task: FleetEngineDelivery.Task) {
        self.id = id
        self.task = task
    }

    /// The indexed values: the assigned vehicle, whether the task is OPEN, the tracking ID.
    var vehicleID: String? { task.assignedVehicleID }
    var isOpen: Bool { task.state != .closed }
    var trackingID: String? { task.trackingID.isEmpty ? nil : task.trackingID }
}

extension FleetEngineDelivery.Task {
    /// The delivery vehicle the task is assigned to, if any.
    var assignedVehicleID: String? { deliveryVehicleID.isEmpty ? nil : deliveryVehicleID }
}
