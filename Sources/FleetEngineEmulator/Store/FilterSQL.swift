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
    }

    /// The table's attribute index: rows (`provider`, `owner`, `key`, `value`), one per key of a row.
    struct Attributes: Sendable {
        var table: String
        var owner: String
    }

    /// What the condition is for: a page walks the rows in ID order and stops when it is full, so it probes each
    /// row's attributes (`EXISTS`); a count reads every match, so it reads each attribute's rows from the index once
    /// (`IN` a list).
    enum Purpose: Sendable { case page, count }

    private(set) var values: [VehicleQuerySQL.Value] = []
    private(set) var condition = ""
    private let placeholder: @Sendable (Int) -> String
    private let purpose: Purpose

    /// - Parameters:
    ///   - provider: the rows' provider, for the attribute index (bound first when the filter reads attributes).
    ///   - area: when given, the row's `lat` and `lng` must lie in one of these boxes.
    ///   - firstPlaceholder: the number of values bound before this condition's (their placeholders come first).
    init(
        _ filter: AIPFilter,
        columns: [String: Column],
        attributes: Attributes,
        provider: String,
        area: [VehicleQuery.Box]? = nil,
        purpose: Purpose,
        bindingAfter firstPlaceholder: Int = 0,
        placeholder: @escaping @Sendable (Int) -> String
    ) {
        self.placeholder = { placeholder($0 + firstPlaceholder) }
        self.purpose = purpose
        // Values are bound in the order their placeholders appear (SQLite's `?` are positional).
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
        let matches = translate(filter.expression, columns: columns, attributes: attributes, provider: provider)
        condition = inArea.map { "\($0) AND \(matches)" } ?? matches
    }

    private mutating func bind(_ value: VehicleQuerySQL.Value) -> String {
        values.append(value)
        return placeholder(values.count)
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
                    "SELECT 1 FROM \(attributes.table) a WHERE a.provider = t.provider AND a.\(attributes.owner) = t.id"
                    + " AND a.key = \(bind(.text(key))) AND a.value = \(bind(.text(text)))"
                return "\(op == .equal ? "" : "NOT ")EXISTS (\(probe))"
            }
            let rows =
                "SELECT a.\(attributes.owner) FROM \(attributes.table) a WHERE a.provider = \(bind(.text(provider)))"
                + " AND a.key = \(bind(.text(key))) AND a.value = \(bind(.text(text)))"
            return "t.id \(op == .equal ? "IN" : "NOT IN") (\(rows))"
        }
        guard let column = columns[field] else { return Self.constant(op) }
        let sqlOperator = op == .notEqual ? "<>" : op.rawValue
        switch (column, value) {
        case (.integer(let name), .number(let number)):
            let bound =
                number.rounded() == number && abs(number) < 1e15 ? bind(.integer(Int64(number))) : bind(.real(number))
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
