package import FleetEngineAPI

/// Every ``DeliveryStore`` method of a store kept in SQL tables: its plan, run by the store.
extension SQLPlanStore {
    private var sql: StoreSQL { Self.storeSQL }

    package func deliveryVehicle(provider: String, id: String) async throws -> FleetEngineDelivery.DeliveryVehicle? {
        try await run(sql.deliveryVehicle(provider: provider, id: id))
    }

    package func insertDeliveryVehicle(_ vehicle: FleetEngineDelivery.DeliveryVehicle, provider: String, id: String)
        async throws
    {
        try await run(sql.insertDeliveryVehicle(vehicle, provider: provider, id: id))
    }

    package func updateDeliveryVehicle(
        provider: String,
        id: String,
        naming taskIDs: Set<String>,
        _ transform:
            @escaping @Sendable (FleetEngineDelivery.DeliveryVehicle, [String: FleetEngineDelivery.Task])
            throws -> DeliveryVehicleChange
    ) async throws -> FleetEngineDelivery.DeliveryVehicle {
        try await run(sql.updateDeliveryVehicle(provider: provider, id: id, naming: taskIDs, transform))
    }

    package func deleteDeliveryVehicle(provider: String, id: String) async throws {
        try await run(sql.deleteDeliveryVehicle(provider: provider, id: id))
    }

    package func deliveryVehicles(provider: String, afterID: String?, limit: Int) async throws
        -> [StoredDeliveryVehicle]
    {
        try await run(sql.deliveryVehicles(provider: provider, afterID: afterID, limit: limit))
    }

    /// A page of the delivery vehicles `query` accepts and their count, from the attribute index and the location
    /// columns.
    package func deliveryVehicles(
        provider: String,
        matching query: DeliveryVehicleQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (vehicles: [StoredDeliveryVehicle], total: Int?) {
        try await run(
            sql.deliveryVehicles(provider: provider, matching: query, after: afterID, limit: limit, counting: counting)
        )
    }

    package func task(provider: String, id: String) async throws -> FleetEngineDelivery.Task? {
        try await run(sql.task(provider: provider, id: id))
    }

    package func insertTasks(_ tasks: [StoredTask], provider: String) async throws {
        try await run(sql.insertTasks(tasks, provider: provider))
    }

    package func updateTask(
        provider: String,
        id: String,
        _ transform: @escaping @Sendable (FleetEngineDelivery.Task) throws -> FleetEngineDelivery.Task
    ) async throws -> FleetEngineDelivery.Task {
        try await run(sql.updateTask(provider: provider, id: id, transform))
    }

    package func deleteTask(provider: String, id: String) async throws {
        try await run(sql.deleteTask(provider: provider, id: id))
    }

    package func tasks(provider: String, afterID: String?, limit: Int) async throws -> [StoredTask] {
        try await run(sql.tasks(provider: provider, afterID: afterID, limit: limit))
    }

    package func tasks(provider: String, trackingID: String) async throws -> [StoredTask] {
        try await run(sql.tasks(provider: provider, trackingID: trackingID))
    }

    /// A page of the tasks `query` accepts and their count, from the task columns, the attribute index and the
    /// counts by state.
    package func tasks(provider: String, matching query: TaskQuery, after afterID: String?, limit: Int, counting: Bool)
        async throws -> (tasks: [StoredTask], total: Int?)
    {
        try await run(sql.tasks(provider: provider, matching: query, after: afterID, limit: limit, counting: counting))
    }
}
