import FleetEngineAPI
import Foundation

/// A ``VehicleQuery`` as SQL over a store's vehicle columns (`state`, `category`, `capacity`, `trip_types`,
/// `seen`, `lat`, `lng`), its attribute table and its trips table: a `WHERE` clause with placeholders and the
/// values they take, the same for SQLite and PostgreSQL but for the names a ``Dialect`` gives. Every condition is
/// exact; the dialect may add a spatial index's condition (a superset of the exact one) so the planner can start
/// from it.
struct VehicleQuerySQL {
    typealias Value = SQLValue

    struct Dialect: Sendable {
        /// The vehicles table, aliased `v`.
        var vehicles: String
        var attributes: String
        var trips: String
        /// The condition on a trips row `t` that it is active.
        var activeTrip: String
        /// Whether a count reads an attribute's vehicles from the attribute index as a list (SQLite, whose
        /// planner does not turn `EXISTS` into a join), rather than probing for each vehicle.
        var countsFromAttributeIndex: Bool
        /// The placeholder for the value numbered `n` (from 1).
        var placeholder: @Sendable (Int) -> String
        /// Whether to keep the planner off the other indexes when a query names an area, so that it starts from
        /// the spatial index (SQLite's planner, without statistics, prefers an equality on an ordinary index).
        var spatialFirst: Bool
        /// A condition a spatial index answers for a point of `v` in the box, at least as wide as the box; its
        /// values are appended by calling `bind`.
        var spatialIndex: @Sendable (_ box: VehicleQuery.Box, _ bind: (Value) -> String) -> String
    }

    private(set) var values: [Value] = []
    private(set) var conditions: [String] = []
    let dialect: Dialect
    private let spatialFirst: Bool
    private let attributeList: Bool
    private let provider: String

    /// What the clause is for: a page walks the vehicles in ID order and stops when it is full, so it probes each
    /// vehicle's attributes; a count reads every match.
    enum Purpose { case page, count }

    init(provider: String, query: VehicleQuery, dialect: Dialect, purpose: Purpose = .page) {
        self.dialect = dialect
        self.provider = provider
        self.attributeList = purpose == .count && dialect.countsFromAttributeIndex
        // A unary `+` keeps SQLite from using an index for the column.
        spatialFirst = dialect.spatialFirst && query.area != nil
        let plain = spatialFirst ? "+" : ""
        conditions.append("\(plain)v.provider = \(bind(.text(provider)))")
        if let ids = query.ids {
            var list: [String] = []
            for id in ids.sorted() { list.append(bind(.text(id))) }
            conditions.append(list.isEmpty ? "1 = 0" : "v.id IN (\(list.joined(separator: ", ")))")
        }
        if let state = query.state {
            conditions.append("\(plain)v.state = \(bind(.integer(Int64(Int32(truncatingIfNeeded: state.rawValue)))))")
        }
        if !query.categories.isEmpty {
            var list: [String] = []
            for raw in query.categories.map({ Int64(Int32(truncatingIfNeeded: $0.rawValue)) }).sorted() {
                list.append(bind(.integer(raw)))
            }
            conditions.append("v.category IN (\(list.joined(separator: ", ")))")
        }
        if !query.tripTypes.isEmpty {
            conditions.append("(v.trip_types & \(bind(.integer(VehicleQuery.mask(query.tripTypes))))) <> 0")
        }
        if let minimumCapacity = query.minimumCapacity {
            conditions.append("v.capacity >= \(bind(.integer(Int64(minimumCapacity))))")
        }
        if let freshSince = query.freshSince {
            conditions.append("v.seen >= \(bind(.real(freshSince.timeIntervalSinceReferenceDate)))")
        }
        if let area = query.area {
            if area.isEmpty {
                conditions.append("1 = 0")
            } else {
                let spatialIndex = dialect.spatialIndex
                var boxes: [String] = []
                for box in area {
                    let indexed = spatialIndex(box) { bind($0) }
                    boxes.append(
                        "(\(indexed) AND v.lat BETWEEN \(bind(.real(box.lowLatitude))) AND \(bind(.real(box.highLatitude)))"
                            + " AND v.lng BETWEEN \(bind(.real(box.lowLongitude))) AND \(bind(.real(box.highLongitude))))"
                    )
                }
                conditions.append(boxes.count == 1 ? boxes[0] : "(\(boxes.joined(separator: " OR ")))")
            }
        }
        if query.onTripOnly {
            conditions.append(
                "EXISTS (SELECT 1 FROM \(dialect.trips) t WHERE t.provider = v.provider AND t.vehicle_id = v.id AND \(dialect.activeTrip))"
            )
        }
        if let attributes = query.attributes {
            conditions.append(condition(attributes))
        }
    }

    /// The conditions of every page.
    var whereClause: String { conditions.joined(separator: " AND ") }

    /// The statement counting (as `n`) the vehicles of `table` (aliased `v`) that match.
    func counting(in table: SQLFragment) -> SQLStatement {
        SQLStatement(unsafeSQL: "SELECT count(*) AS n FROM \(table.sql) v WHERE \(whereClause)", binds: values)
    }

    /// The conditions of the page after `afterID`, and their values.
    func page(after afterID: String?) -> (whereClause: String, values: [Value]) {
        guard let afterID else { return (whereClause, values) }
        let plain = spatialFirst ? "+" : ""
        return (whereClause + " AND \(plain)v.id > \(dialect.placeholder(values.count + 1))", values + [.text(afterID)])
    }

    private mutating func bind(_ value: Value) -> String {
        values.append(value)
        return dialect.placeholder(values.count)
    }

    private mutating func combine(_ parts: [AttributeCondition], with word: String) -> String? {
        guard !parts.isEmpty else { return nil }
        var clauses: [String] = []
        for part in parts { clauses.append(condition(part)) }
        return "(" + clauses.joined(separator: " \(word) ") + ")"
    }

    private mutating func condition(_ attribute: AttributeCondition) -> String {
        switch attribute {
        case .equals(let key, let value):
            if attributeList {
                return
                    "v.id IN (SELECT a.vehicle_id FROM \(dialect.attributes) a WHERE a.provider = \(bind(.text(provider)))"
                    + " AND a.key = \(bind(.text(key))) AND a.value = \(bind(.text(value))))"
            }
            return "EXISTS (SELECT 1 FROM \(dialect.attributes) a WHERE a.provider = v.provider AND a.vehicle_id = v.id"
                + " AND a.key = \(bind(.text(key))) AND a.value = \(bind(.text(value))))"
        case .all(let parts):
            return combine(parts, with: "AND") ?? "1 = 1"
        case .any(let parts):
            return combine(parts, with: "OR") ?? "1 = 0"
        case .not(let inner):
            return "NOT (\(condition(inner)))"
        }
    }
}
