import FleetAuthCore
import FleetAuthServerCore
import Foundation

/// The part of Cloud Logging's query language (cloud.google.com/logging/docs/view/logging-query-language) that
/// Fleet Engine's guides and Google's client libraries write, evaluated over the request log's entries:
///
/// ```
/// resource.type="fleetengine.googleapis.com/Fleet" AND labels.vehicle_id="v1"
/// logName:"update_vehicle" severity>=WARNING jsonPayload.fleetauthDecision.outcome=REFUSED
/// (labels.trip_id="t1" OR labels.trip_id="t2") AND NOT jsonPayload.errorResponse:*
/// timestamp>="2026-12-01T02:01:42.408823+0000"
/// ```
///
/// - Comparisons `FIELD OP VALUE` with `=`, `!=`, `<`, `<=`, `>`, `>=`, `:` (has: a case-insensitive substring, or
///   `:*` for "the field is present"), `=~` and `!~` (regular expressions). A field is a path into the entry
///   (`jsonPayload.request.vehicle.state`, `labels."vehicle_id"`); a repeated field matches when any element does.
///   `severity` compares by its rank (`DEBUG` < `INFO` < `WARNING` < `ERROR` …), `timestamp` and
///   `receiveTimestamp` as times (RFC 3339, offsets written `Z`, `+00:00` or `+0000`), numbers as numbers.
/// - `NOT` and `-` negate; `OR` binds tighter than `AND`, as Google documents; two expressions side by side are
///   joined by `AND`; parentheses group. A bare value (`"UpdateVehicle"`) matches an entry any of whose text
///   fields contains it.
/// - A field absent from an entry makes `!=` true and every other comparison false.
///
/// A filter that does not parse is `INVALID_ARGUMENT` naming the column where it fails. Filters are at most 20,000
/// characters (Google's limit) and nest at most 32 levels, since the parser and the evaluator recurse.
struct LogFilter {
    enum Operator: String, CaseIterable {
        case equal = "="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case has = ":"
        case matches = "=~"
        case notMatches = "!~"
    }

    indirect enum Expression {
        case compare(path: [String], op: Operator, value: String, regex: Regex<AnyRegexOutput>?)
        case text(String)
        case and([Expression])
        case or([Expression])
        case not(Expression)
    }

    static let maximumLength = 20_000
    static let maximumDepth = 32

    let expression: Expression

    init(_ text: String) throws(GoogleAPIError) {
        guard text.count <= Self.maximumLength else {
            throw .invalidArgument("filter is longer than \(Self.maximumLength) characters.")
        }
        var parser = Parser(tokens: try Self.tokens(text))
        expression = try parser.conjunction()
        if let token = parser.current {
            throw .invalidArgument("filter: unexpected \"\(token.text.prefix(100))\" at column \(token.column).")
        }
    }

    /// Whether `entry` (a `LogEntry` in JSON) passes the filter.
    func matches(_ entry: JSONObject) -> Bool { Self.evaluate(expression, entry) }

    // MARK: - Evaluation

    static let severities = [
        "DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400, "ERROR": 500, "CRITICAL": 600,
        "ALERT": 700, "EMERGENCY": 800,
    ]

    private static func evaluate(_ expression: Expression, _ entry: JSONObject) -> Bool {
        switch expression {
        case .and(let parts): return parts.allSatisfy { evaluate($0, entry) }
        case .or(let parts): return parts.contains { evaluate($0, entry) }
        case .not(let inner): return !evaluate(inner, entry)
        case .text(let needle): return contains(.object(entry), needle.lowercased())
        case .compare(let path, let op, let value, let regex):
            let found = values(at: path[...], in: .object(entry))
            if op == .notEqual {
                return !found.contains { compare($0, .equal, value, path: path, regex: nil) }
            }
            if op == .notMatches {
                return !found.contains { compare($0, .matches, value, path: path, regex: regex) }
            }
            return found.contains { compare($0, op, value, path: path, regex: regex) }
        }
    }

    /// The values at `path` under `value`, stepping into every element of the arrays on the way.
    private static func values(at path: ArraySlice<String>, in value: JSONValue) -> [JSONValue] {
        if case .array(let elements) = value { return elements.flatMap { values(at: path, in: $0) } }
        guard let key = path.first else { return [value] }
        guard case .object(let object) = value, let next = object[key] else { return [] }
        return values(at: path.dropFirst(), in: next)
    }

    private static func contains(_ value: JSONValue, _ needle: String) -> Bool {
        switch value {
        case .object(let object): return object.contains { contains($0.value, needle) }
        case .array(let elements): return elements.contains { contains($0, needle) }
        default: return text(value)?.lowercased().contains(needle) ?? false
        }
    }

    private static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): String(flag)
        case .null, .array, .object: nil
        }
    }

    private static func compare(
        _ value: JSONValue,
        _ op: Operator,
        _ expected: String,
        path: [String],
        regex: Regex<AnyRegexOutput>?
    ) -> Bool {
        switch op {
        case .has:
            if expected == "*" { return true }
            return contains(value, expected.lowercased())
        case .matches, .notMatches:
            guard let regex, let text = text(value) else { return false }
            return (try? regex.firstMatch(in: text)) != nil
        default:
            break
        }
        guard let actual = text(value) else { return false }
        if path == ["severity"], let a = severities[actual.uppercased()], let b = severities[expected.uppercased()] {
            return holds(op, a, b)
        }
        if path == ["timestamp"] || path == ["receiveTimestamp"], let a = parseTime(actual),
            let b = parseTime(expected)
        {
            return holds(op, a, b)
        }
        if case .integer = value, let a = Double(actual), let b = Double(expected) { return holds(op, a, b) }
        if case .double = value, let a = Double(actual), let b = Double(expected) { return holds(op, a, b) }
        return holds(op, actual, expected)
    }

    private static func holds<T: Comparable>(_ op: Operator, _ a: T, _ b: T) -> Bool {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        case .has, .matches, .notMatches: false
        }
    }

    /// An RFC 3339 time, also with the `+0000` offset the client libraries write, or a date alone (its midnight UTC).
    static func parseTime(_ text: String) -> Date? {
        var text = text
        let utf8 = Array(text.utf8)
        if utf8.count > 5, utf8[utf8.count - 5] == UInt8(ascii: "+") || utf8[utf8.count - 5] == UInt8(ascii: "-"),
            utf8[(utf8.count - 4)...].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            text.contains("T")
        {
            text.insert(":", at: text.index(text.endIndex, offsetBy: -2))
        }
        if !text.contains("T") { text += "T00:00:00Z" }
        return RFC3339.parse(text)
    }

    // MARK: - Parsing

    typealias Token = AIPFilter.Token

    static func tokens(_ text: String) throws(GoogleAPIError) -> [Token] {
        var tokens: [Token] = []
        let characters = Array(text)
        var index = 0
        let stops: Set<Character> = ["(", ")", "=", "!", "<", ">", ":", "\""]
        while index < characters.count {
            let first = characters[index]
            let column = index + 1
            let afterOperator = tokens.last.map { $0.kind == .symbol && Operator(rawValue: $0.text) != nil } ?? false
            if first.isWhitespace {
                index += 1
            } else if first == "\"" {
                tokens.append(try AIPFilter.quoted(characters, at: &index))
            } else if index + 1 < characters.count,
                let op = Operator(rawValue: String(characters[index...index + 1])), op.rawValue.count == 2
            {
                tokens.append(Token(kind: .symbol, text: op.rawValue, column: column))
                index += 2
            } else if "()=<>:".contains(first) || (first == "-" && !afterOperator) {
                tokens.append(Token(kind: .symbol, text: String(first), column: column))
                index += 1
            } else {
                // After an operator a bare value runs to the next space or parenthesis (`2026-12-01T00:00:00Z`).
                var end = index
                while end < characters.count, !characters[end].isWhitespace,
                    afterOperator ? !"()".contains(characters[end]) : !stops.contains(characters[end])
                {
                    end += 1
                }
                guard end > index else {
                    throw .invalidArgument("filter: unexpected \"\(first)\" at column \(column).")
                }
                tokens.append(Token(kind: .word, text: String(characters[index..<end]), column: column))
                index = end
            }
        }
        return tokens
    }

    private struct Parser {
        let tokens: [Token]
        var position = 0
        var depth = 0

        init(tokens: [Token]) { self.tokens = tokens }

        var current: Token? { position < tokens.count ? tokens[position] : nil }
        var next: Token? { position + 1 < tokens.count ? tokens[position + 1] : nil }

        mutating func enter() throws(GoogleAPIError) {
            depth += 1
            guard depth <= LogFilter.maximumDepth else {
                throw .invalidArgument(
                    "filter nests deeper than \(LogFilter.maximumDepth) levels (NOT, - and parentheses count)."
                )
            }
        }

        mutating func take(_ text: String) -> Bool {
            guard let current, current.text == text, current.kind != .quoted else { return false }
            position += 1
            return true
        }

        mutating func conjunction() throws(GoogleAPIError) -> Expression {
            if current == nil { return .and([]) }
            var parts = [try disjunction()]
            while let token = current, token.text != ")" || token.kind == .quoted {
                _ = take("AND")
                parts.append(try disjunction())
            }
            return parts.count == 1 ? parts[0] : .and(parts)
        }

        mutating func disjunction() throws(GoogleAPIError) -> Expression {
            var parts = [try term()]
            while take("OR") { parts.append(try term()) }
            return parts.count == 1 ? parts[0] : .or(parts)
        }

        mutating func term() throws(GoogleAPIError) -> Expression {
            if take("NOT") || take("-") {
                try enter()
                defer { depth -= 1 }
                return .not(try term())
            }
            if let open = current, take("(") {
                try enter()
                defer { depth -= 1 }
                let inner = try conjunction()
                guard take(")") else {
                    throw .invalidArgument("filter: the \"(\" at column \(open.column) is not closed.")
                }
                return inner
            }
            guard let first = current, first.kind != .symbol else {
                let found = current.map { "\"\($0.text.prefix(100))\" at column \($0.column)" } ?? "the end"
                throw .invalidArgument("filter: expected a comparison or a value, found \(found).")
            }
            guard let symbol = next, symbol.kind == .symbol, let op = Operator(rawValue: symbol.text) else {
                position += 1
                return .text(first.text)
            }
            let path = try Self.path(first)
            position += 2
            if take("(") {
                // `labels.trip_id=("t1" OR "t2")`: the comparison applied to each value.
                try enter()
                defer { depth -= 1 }
                var values: [Expression] = []
                var joinedByOr = false
                while let token = current, token.kind != .symbol {
                    values.append(try comparison(path, op, token))
                    position += 1
                    if take("OR") { joinedByOr = true } else { _ = take("AND") }
                }
                guard take(")"), !values.isEmpty else {
                    throw .invalidArgument("filter: the values after column \(symbol.column) are not closed.")
                }
                return values.count == 1 ? values[0] : joinedByOr ? .or(values) : .and(values)
            }
            guard let value = current, value.kind != .symbol else {
                throw .invalidArgument("filter: \(first.text) needs a value after column \(symbol.column).")
            }
            position += 1
            return try comparison(path, op, value)
        }

        func comparison(_ path: [String], _ op: Operator, _ value: Token) throws(GoogleAPIError) -> Expression {
            var regex: Regex<AnyRegexOutput>?
            if op == .matches || op == .notMatches {
                do {
                    regex = try Regex(value.text)
                } catch {
                    throw .invalidArgument(
                        "filter: \"\(value.text.prefix(100))\" (column \(value.column)) is not a regular expression."
                    )
                }
            }
            return .compare(path: path, op: op, value: value.text, regex: regex)
        }

        /// `jsonPayload.request.vehicleId` → its keys; a quoted key (`labels."a.b"`) keeps its dots.
        static func path(_ token: Token) throws(GoogleAPIError) -> [String] {
            guard token.kind == .word else { return [token.text] }
            var keys: [String] = []
            var key = ""
            var quoted = false
            for character in token.text {
                if character == "\"" {
                    quoted.toggle()
                } else if character == ".", !quoted {
                    keys.append(key)
                    key = ""
                } else {
                    key.append(character)
                }
            }
            keys.append(key)
            guard !keys.contains(where: \.isEmpty) else {
                throw .invalidArgument("filter: \"\(token.text.prefix(100))\" (column \(token.column)) is not a field.")
            }
            return keys
        }
    }
}
