/// An ``AIPFilter`` as an SQL condition over the columns of a table aliased `t` and its attribute table, so that a
/// store answers a Deliveries list from its indexes. The condition is exact: for every row it is true or false
/// (never SQL's unknown), as ``AIPFilter/matches(_:)`` is on the message the row stores, so `NOT`, `AND` and `OR`
/// combine the same way.
///
/// How absent values compare follows ``AIPFilter/Value/compare(_:_:)``: a field without a value satisfies only `!=`.
struct FilterSQL {
    /// Where a filter field's value is kept.
    enum Column: Sendable, Hashable {
        /// A number column that is never NULL (an enum's number).
        case integer(String)
        /// A number column, NULL when the message has no value.
        case real(String)
        /// A string column, NULL when the message's string is empty (a string field always has a value, `""`).
        case text(String)

        var name: String {
            switch self {
            case .integer(let name), .real(let name), .text(let name): name
            }
        }
    }

    /// The table's attribute index: rows (`provider`, `owner`, `key`, `value`), one per key of a row.
    struct Attributes: Sendable {
        var table: SQLFragment
        var owner: String
        /// Columns of the row that each of its attribute rows also holds, under the same names (the store writes
        /// them together), so that a count can be answered from the attribute index alone.
        var carried: [String] = []
    }

    /// A table of counts kept per value of one integer column of the listed table: rows (`provider`, `column`, `n`).
    struct Counts: Sendable {
        var table: SQLFragment
        var column: String
    }

    /// What the condition is for: a page walks the rows in ID order and stops when it is full, so it probes each
    /// row's attributes (`EXISTS`); a count reads every match, so it reads each attribute's rows from the index once
    /// (`IN` a list).
    enum Purpose: Sendable { case page, count }

    private var values: [SQLValue] = []
    private var sql = ""
    /// The condition, with its values bound.
    var condition: SQLStatement { SQLStatement(unsafeSQL: sql, binds: values) }
    /// The table whose rows `t` names in ``condition``: `nil` for the listed table itself; for a count, the kept
    /// counts' table when they answer it, or the attribute table when it is read from the attribute index
    /// (``init(_:columns:attributes:provider:area:counts:purpose:)``).
    private(set) var countedTable: SQLFragment?
    /// What a count selects from ``countedTable`` (`count(*)` of its rows that satisfy ``condition``, or the sum of
    /// kept counts).
    private(set) var counted: SQLFragment = "count(*)"
    /// The listed row's ID as ``condition`` names it.
    private var rowID = "t.id"
    private let purpose: Purpose

    /// - Parameters:
    ///   - provider: the rows' provider, for the attribute index (bound first when the filter reads attributes).
    ///   - area: when given, the row's `lat` and `lng` must lie in one of these boxes.
    ///   - counts: counts the store keeps, which answer a count of every row or of one value of their column.
    init(
        _ filter: AIPFilter,
        columns: [String: Column],
        attributes: Attributes,
        provider: String,
        area: [VehicleQuery.Box]? = nil,
        counts: Counts? = nil,
        purpose: Purpose
    ) {
        self.purpose = purpose
        // Values are bound in the order their `?` appear.
        var inArea: String?
        if let area {
            var boxes: [String] = []
            for box in area {
                boxes.append(
                    "(t.lat BETWEEN \(bind(.real(box.lowLatitude))) AND \(bind(.real(box.highLatitude)))"
                        + " AND t.lng BETWEEN \(bind(.real(box.lowLongitude))) AND \(bind(.real(box.highLongitude))))"
                )
            }
            inArea =
                "t.lat IS NOT NULL AND t.lng IS NOT NULL AND "
                + (boxes.isEmpty ? "1 = 0" : "(" + boxes.joined(separator: " OR ") + ")")
        }
        if purpose == .count, inArea == nil, let counts,
            let value = Self.countedValue(filter.expression, columns: columns, counts: counts)
        {
            // No filter, or only `column = value`: the kept counts are the answer (ListTasks' `state = OPEN`).
            countedTable = counts.table
            counted = "CAST(coalesce(sum(t.n), 0) AS BIGINT)"
            sql = value.map { "t.\(counts.column) = \(bind(.integer($0)))" } ?? "1 = 1"
            return
        }
        if purpose == .count, inArea == nil,
            let (key, text, others) = Self.drivingAttribute(filter.expression, columns: columns, attributes: attributes)
        {
            // Every match has exactly one row in the index range (key, text) — a row holds one value per key — and
            // that row carries every column the rest of the filter reads: count those rows, without a probe of the
            // listed table per match (ListTasks' `state = OPEN AND attributes.zone = "north"` among 100,000 tasks).
            countedTable = attributes.table
            rowID = "t.\(attributes.owner)"
            var clauses = ["t.key = \(bind(.text(key)))", "t.value = \(bind(.text(text)))"]
            for part in others {
                clauses.append(translate(part, columns: columns, attributes: attributes, provider: provider))
            }
            sql = clauses.joined(separator: " AND ")
            return
        }
        let matches = translate(filter.expression, columns: columns, attributes: attributes, provider: provider)
        sql = inArea.map { "\($0) AND \(matches)" } ?? matches
    }

    private static func conjuncts(_ expression: AIPFilter.Expression) -> [AIPFilter.Expression] {
        if case .and(let parts) = expression { return parts.flatMap(conjuncts) }
        return [expression]
    }

    /// `.some(nil)` when the filter accepts every row, `.some(value)` when it is `column = value` alone, else `nil`.
    private static func countedValue(
        _ expression: AIPFilter.Expression,
        columns: [String: Column],
        counts: Counts
    ) -> Int64?? {
        let parts = conjuncts(expression)
        if parts.isEmpty { return .some(nil) }
        guard parts.count == 1, case .compare(let field, .equal, .number(let number)) = parts[0],
            columns[field] == .integer(counts.column), let integer = exactInteger(number)
        else { return nil }
        return .some(integer)
    }

    /// The filter's number as an integer column's value, when it is one exactly (the filter reads every number as a
    /// `Double`).
    private static func exactInteger(_ number: Double) -> Int64? {
        number.rounded() == number && abs(number) < 1e15 ? Int64(number) : nil
    }

    /// An `attributes.KEY = "VALUE"` the whole filter requires, and the other conditions it is joined to by AND, when
    /// these read nothing but attributes and the columns the attribute rows carry.
    private static func drivingAttribute(
        _ expression: AIPFilter.Expression,
        columns: [String: Column],
        attributes: Attributes
    ) -> (key: String, value: String, others: [AIPFilter.Expression])? {
        func readsCarriedOnly(_ expression: AIPFilter.Expression) -> Bool {
            switch expression {
            case .and(let parts), .or(let parts): parts.allSatisfy(readsCarriedOnly)
            case .not(let inner): readsCarriedOnly(inner)
            case .compare(let field, _, _):
                // A field without a column compares as a constant.
                field.hasPrefix("attributes.") || columns[field].map { attributes.carried.contains($0.name) } ?? true
            }
        }
        var parts = conjuncts(expression)
        for (index, part) in parts.enumerated() {
            guard case .compare(let field, .equal, .string(let text)) = part, field.hasPrefix("attributes.") else {
                continue
            }
            parts.remove(at: index)
            guard parts.allSatisfy(readsCarriedOnly) else { return nil }
            return (String(field.dropFirst("attributes.".count)), text, parts)
        }
        return nil
    }

    private mutating func bind(_ value: SQLValue) -> String {
        values.append(value)
        return "?"
    }

    private mutating func translate(
        _ expression: AIPFilter.Expression,
        columns: [String: Column],
        attributes: Attributes,
        provider: String
    ) -> String {
        switch expression {
        case .and(let parts), .or(let parts):
            guard !parts.isEmpty else { return "1 = 1" }
            var clauses: [String] = []
            for part in parts {
                clauses.append(translate(part, columns: columns, attributes: attributes, provider: provider))
            }
            let word = if case .and = expression { " AND " } else { " OR " }
            return "(" + clauses.joined(separator: word) + ")"
        case .not(let inner):
            return "NOT (" + translate(inner, columns: columns, attributes: attributes, provider: provider) + ")"
        case .compare(let field, let op, let value):
            return compare(field, op, value, columns: columns, attributes: attributes, provider: provider)
        }
    }

    /// What a comparison is for every row when the field's values can never be compared with `value` (a string
    /// against a number field, or the other way round): `!=` holds, the others do not.
    private static func constant(_ op: AIPFilter.Operator) -> String { op == .notEqual ? "1 = 1" : "1 = 0" }

    private mutating func compare(
        _ field: String,
        _ op: AIPFilter.Operator,
        _ value: AIPFilter.Value,
        columns: [String: Column],
        attributes: Attributes,
        provider: String
    ) -> String {
        if field.hasPrefix("attributes.") {
            guard case .string(let text) = value, op == .equal || op == .notEqual else { return Self.constant(op) }
            // A row has at most one value per key: `=` is "has the key with that value", `!=` is its complement
            // (no such key, or another value).
            let key = String(field.dropFirst("attributes.".count))
            if purpose == .page {
                let probe =
                    "SELECT 1 FROM \(attributes.table.sql) a WHERE a.provider = t.provider AND a.\(attributes.owner) = t.id"
                    + " AND a.key = \(bind(.text(key))) AND a.value = \(bind(.text(text)))"
                return "\(op == .equal ? "" : "NOT ")EXISTS (\(probe))"
            }
            let rows =
                "SELECT a.\(attributes.owner) FROM \(attributes.table.sql) a WHERE a.provider = \(bind(.text(provider)))"
                + " AND a.key = \(bind(.text(key))) AND a.value = \(bind(.text(text)))"
            return "\(rowID) \(op == .equal ? "IN" : "NOT IN") (\(rows))"
        }
        guard let column = columns[field] else { return Self.constant(op) }
        let sqlOperator = op == .notEqual ? "<>" : op.rawValue
        switch (column, value) {
        case (.integer(let name), .number(let number)):
            let bound = Self.exactInteger(number).map { bind(.integer($0)) } ?? bind(.real(number))
            return "t.\(name) \(sqlOperator) \(bound)"
        case (.real(let name), .number(let number)):
            let bound = bind(.real(number))
            return op == .notEqual
                ? "(t.\(name) IS NULL OR t.\(name) <> \(bound))"
                : "(t.\(name) IS NOT NULL AND t.\(name) \(sqlOperator) \(bound))"
        case (.text(let name), .string(let text)):
            guard op == .equal || op == .notEqual else { return Self.constant(op) }
            if text.isEmpty { return "t.\(name) IS \(op == .equal ? "" : "NOT ")NULL" }
            let bound = bind(.text(text))
            return op == .equal
                ? "(t.\(name) IS NOT NULL AND t.\(name) = \(bound))" : "(t.\(name) IS NULL OR t.\(name) <> \(bound))"
        default:
            return Self.constant(op)
        }
    }
}
