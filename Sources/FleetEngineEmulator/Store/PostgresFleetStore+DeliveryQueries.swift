import FleetEngineAPI
import Foundation
import NIOCore
import PostgresNIO

/// ListTasks' and ListDeliveryVehicles' queries on PostgreSQL: the filter as SQL (``FilterSQL``), a count and a page.
extension PostgresFleetStore {
    /// The count, then a page of the tasks `query` accepts (keyset: `id > afterID`).
    public func tasks(provider: String, matching query: TaskQuery, after afterID: String?, limit: Int, counting: Bool)
        async throws -> (tasks: [StoredTask], total: Int?)
    {
        let filter = { (purpose: FilterSQL.Purpose) in
            FilterSQL(
                query.filter,
                columns: TaskRow.columns,
                attributes: .init(table: "emulator_task_attributes", owner: "task_id", carried: TaskRow.carriedColumns),
                provider: provider,
                counts: .init(table: "emulator_task_counts", column: "state"),
                purpose: purpose,
                bindingAfter: 1,
                placeholder: { "$\($0)" }
            )
        }
        let (rows, total) = try await filteredPage(
            table: "emulator_tasks",
            provider: provider,
            filter: filter,
            after: afterID,
            limit: limit,
            counting: counting
        )
        return (try rows.map { try Self.storedTask(id: $0.id, body: $0.body) }, total)
    }

    /// The count, then a page of the delivery vehicles `query` accepts (keyset: `id > afterID`).
    public func deliveryVehicles(
        provider: String,
        matching query: DeliveryVehicleQuery,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (vehicles: [StoredDeliveryVehicle], total: Int?) {
        let filter = { (purpose: FilterSQL.Purpose) in
            FilterSQL(
                query.filter,
                columns: [:],
                attributes: .init(table: "emulator_delivery_vehicle_attributes", owner: "vehicle_id"),
                provider: provider,
                area: query.area,
                purpose: purpose,
                bindingAfter: 1,
                placeholder: { "$\($0)" }
            )
        }
        let (rows, total) = try await filteredPage(
            table: "emulator_delivery_vehicles",
            provider: provider,
            filter: filter,
            after: afterID,
            limit: limit,
            counting: counting
        )
        return (
            try rows.map {
                StoredDeliveryVehicle(
                    id: $0.id,
                    vehicle: try Self.decode($0.body, as: FleetEngineDelivery.DeliveryVehicle.self)
                )
            },
            total
        )
    }

    private func filteredPage(
        table: String,
        provider: String,
        filter: (FilterSQL.Purpose) -> FilterSQL,
        after afterID: String?,
        limit: Int,
        counting: Bool
    ) async throws -> (rows: [(id: String, body: ByteBuffer)], total: Int?) {
        var total: Int?
        if counting {
            let count = filter(.count)
            let rows = try await database.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT \(count.counted) FROM \(count.countedTable ?? table) t WHERE t.provider = $1 AND \(count.condition)
                        """,
                    binds: Self.bindings([.text(provider)] + count.values)
                )
            )
            total = try rows.first?.decode(Int.self)
        }
        let page = filter(.page)
        let values = [VehicleQuerySQL.Value.text(provider)] + page.values
        let after = values.count + 1
        let rows = try await database.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT t.id, t.body FROM \(table) t WHERE t.provider = $1 AND \(page.condition) AND t.id > $\(after)
                    ORDER BY t.id LIMIT \(max(limit, 0))
                    """,
                binds: Self.bindings(values + [.text(afterID ?? "")])
            )
        )
        return (try rows.map { try $0.decode((String, ByteBuffer).self) }.map { (id: $0.0, body: $0.1) }, total)
    }
}
