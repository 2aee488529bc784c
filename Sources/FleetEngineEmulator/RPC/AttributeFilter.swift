import FleetAuthServerCore

/// The filter of ListVehicles and SearchVehicles: restrictions on vehicle attributes only (`attributes.KEY = VALUE`
/// or `!=`, compared as strings), in the language of ``AIPFilter``, as the condition a store's query answers.
struct AttributeFilter: Sendable {
    /// The filter as the condition a store's query answers.
    let condition: AttributeCondition

    /// Parses `text`; an empty filter matches every vehicle.
    init(_ text: String) throws(GoogleAPIError) {
        condition = Self.condition(try AIPFilter(text, fields: [:], describing: "vehicles").expression)
    }

    private static func condition(_ expression: AIPFilter.Expression) -> AttributeCondition {
        switch expression {
        case .compare(let field, let op, let value):
            let key = String(field.dropFirst("attributes.".count))
            guard case .string(let text) = value else { return .not(.all([])) }
            let equals = AttributeCondition.equals(key: key, value: text)
            return op == .equal ? equals : .not(equals)
        case .and(let parts): return .all(parts.map(condition))
        case .or(let parts): return .any(parts.map(condition))
        case .not(let inner): return .not(condition(inner))
        }
    }
}
