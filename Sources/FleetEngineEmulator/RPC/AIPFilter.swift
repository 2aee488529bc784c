import FleetAuthCore
import FleetAuthServerCore
import Foundation

/// The `filter` of Fleet Engine's list and search methods: the part of [AIP-160](https://google.aip.dev/160) Fleet
/// Engine documents, as restrictions `FIELD OPERATOR VALUE` joined by `AND` (or juxtaposition), `OR` (which binds
/// tighter, as AIP-160 says), `NOT` or `-`, and parentheses:
///
/// ```
/// attributes.tier = "premium" AND (attributes.seats = "6" OR attributes.accessible = "true")
/// state = OPEN AND type = DELIVERY AND planned_location.point.latitude >= 51.4
/// ```
///
/// Each use names the fields it knows (``FieldKind``): vehicles' filters only `attributes.KEY`, compared as strings
/// with `=` and `!=`; ListTasks' also the task's state, type, outcome, IDs, outcome time and coordinates. Values are
/// quoted (`"10"`) or bare (`OPEN`, `42`). At most 50 restrictions, 32 levels of nesting (each `NOT`, `-` and
/// parenthesis counts) and 4,096 bytes: the parser and the evaluator recurse, so a filter an attacker writes must
/// not nest without bound. A filter that does not parse is `INVALID_ARGUMENT` naming the column (1-based, in
/// characters) where it fails, or the limit it passes.
struct AIPFilter: Sendable {
    /// How a field's value is compared.
    enum FieldKind: Sendable, Hashable {
        /// A string, with `=` and `!=`.
        case string
        /// An enum, by name or number, with `=` and `!=`.
        case enumeration([String: Int])
        /// A number, with every operator.
        case number
        /// An RFC 3339 timestamp, with every operator.
        case timestamp
    }

    enum Operator: String, Sendable, Hashable, CaseIterable {
        case equal = "=", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

        func holds<T: Comparable>(_ a: T, _ b: T) -> Bool {
            switch self {
            case .equal: a == b
            case .notEqual: a != b
            case .less: a < b
            case .lessOrEqual: a <= b
            case .greater: a > b
            case .greaterOrEqual: a >= b
            }
        }
    }

    /// A value as a restriction compares it.
    enum Value: Sendable, Hashable {
        case string(String)
        case number(Double)
        case absent

        func compare(_ op: Operator, _ other: Value) -> Bool {
            switch (self, other) {
            case (.string(let a), .string(let b)): op.holds(a, b)
            case (.number(let a), .number(let b)): op.holds(a, b)
            default: op == .notEqual
            }
        }
    }

    indirect enum Expression: Sendable, Hashable {
        case compare(field: String, op: Operator, value: Value)
        case and([Expression])
        case or([Expression])
        case not(Expression)
    }

    static let maximumRestrictions = 50
    static let maximumDepth = 32
    static let maximumLength = 4096

    let expression: Expression

    /// Parses `text` against `fields` (by name, with how each compares; `attributes.KEY` is always a string field);
    /// `what` names the resources in messages ("tasks"). An empty filter matches everything.
    init(_ text: String, fields: [String: FieldKind], describing what: String) throws(GoogleAPIError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw .invalidArgument("filter is longer than \(Self.maximumLength) bytes.")
        }
        var parser = Parser(tokens: try Self.tokens(text), fields: fields, what: what)
        expression = try parser.conjunction()
        if let token = parser.current {
            throw .invalidArgument("filter: unexpected \"\(token.text.prefix(100))\" at column \(token.column).")
        }
        guard parser.restrictions <= Self.maximumRestrictions else {
            throw .invalidArgument("filter has more than \(Self.maximumRestrictions) restrictions.")
        }
    }

    /// Whether the values `value(field)` gives satisfy the filter.
    func matches(_ value: (String) -> Value) -> Bool { Self.evaluate(expression, value) }

    private static func evaluate(_ expression: Expression, _ value: (String) -> Value) -> Bool {
        switch expression {
        case .compare(let field, let op, let expected): value(field).compare(op, expected)
        case .and(let parts): parts.allSatisfy { evaluate($0, value) }
        case .or(let parts): parts.contains { evaluate($0, value) }
        case .not(let inner): !evaluate(inner, value)
        }
    }

    struct Token: Sendable, Hashable {
        enum Kind: Sendable, Hashable { case word, quoted, symbol }
        let kind: Kind
        let text: String
        /// 1-based column of the token's first character.
        let column: Int
    }

    static func tokens(_ text: String) throws(GoogleAPIError) -> [Token] {
        var tokens: [Token] = []
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let first = characters[index]
            let column = index + 1
            if first.isWhitespace {
                index += 1
            } else if first == "\"" {
                tokens.append(try quoted(characters, at: &index))
            } else if "!<>".contains(first), index + 1 < characters.count, characters[index + 1] == "=" {
                tokens.append(Token(kind: .symbol, text: String(first) + "=", column: column))
                index += 2
            } else if first == "-", index + 1 < characters.count, characters[index + 1].isNumber,
                let last = tokens.last, last.kind == .symbol, Operator(rawValue: last.text) != nil
            {
                // A negative number after a comparison, not a NOT.
                var end = index + 1
                while end < characters.count, !characters[end].isWhitespace, !"()=!<>\"".contains(characters[end]) {
                    end += 1
                }
                tokens.append(Token(kind: .word, text: String(characters[index..<end]), column: column))
                index = end
            } else if "()=<>-".contains(first) {
                tokens.append(Token(kind: .symbol, text: String(first), column: column))
                index += 1
            } else {
                var end = index
                while end < characters.count, !characters[end].isWhitespace, !"()=!<>\"".contains(characters[end]) {
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

    /// The quoted string that starts at `index` (a backslash escapes the next character), as a token; `index`
    /// moves past its closing quote. Cloud Logging's filters (``LogFilter``) quote the same way.
    static func quoted(_ characters: [Character], at index: inout Int) throws(GoogleAPIError) -> Token {
        let column = index + 1
        var value = ""
        index += 1
        while index < characters.count {
            let next = characters[index]
            index += 1
            if next == "\\", index < characters.count {
                value.append(characters[index])
                index += 1
            } else if next == "\"" {
                return Token(kind: .quoted, text: value, column: column)
            } else {
                value.append(next)
            }
        }
        throw .invalidArgument("filter: the string at column \(column) is not terminated.")
    }

    private struct Parser {
        let tokens: [Token]
        let fields: [String: FieldKind]
        let what: String
        var position = 0
        var restrictions = 0
        var depth = 0

        init(tokens: [Token], fields: [String: FieldKind], what: String) {
            self.tokens = tokens
            self.fields = fields
            self.what = what
        }

        var current: Token? { position < tokens.count ? tokens[position] : nil }
        var end: Int { (tokens.last.map { $0.column + $0.text.count }) ?? 1 }

        mutating func enter() throws(GoogleAPIError) {
            depth += 1
            guard depth <= AIPFilter.maximumDepth else {
                throw .invalidArgument(
                    "filter nests deeper than \(AIPFilter.maximumDepth) levels (NOT, - and parentheses count)."
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
            while let token = current, token.text != ")" {
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
            guard let field = current, field.kind == .word else {
                let found =
                    current.map { "\"\($0.text.prefix(100))\" at column \($0.column)" } ?? "the end (column \(end))"
                throw .invalidArgument("filter: expected a restriction on a field of \(what), found \(found).")
            }
            let kind: FieldKind
            if field.text.hasPrefix("attributes."), field.text.count > "attributes.".count {
                kind = .string
            } else if let known = fields[field.text] {
                kind = known
            } else {
                let names = (fields.keys.sorted() + ["attributes.<key>"]).joined(separator: ", ")
                throw .invalidArgument(
                    "filter: \(what) have no field \"\(field.text.prefix(100))\" (column \(field.column)); fields: \(names)."
                )
            }
            position += 1
            guard let symbol = current, symbol.kind == .symbol, let op = Operator(rawValue: symbol.text) else {
                let found =
                    current.map { "\"\($0.text.prefix(100))\" at column \($0.column)" } ?? "the end (column \(end))"
                throw .invalidArgument(
                    "filter: \(field.text) needs a comparison (=, !=, <, <=, >, >=), found \(found)."
                )
            }
            position += 1
            switch kind {
            case .string, .enumeration:
                guard op == .equal || op == .notEqual else {
                    throw .invalidArgument(
                        "filter: \(field.text) is compared with = or != only (column \(symbol.column))."
                    )
                }
            case .number, .timestamp: break
            }
            guard let value = current, value.kind != .symbol else {
                throw .invalidArgument("filter: \(field.text) needs a value after column \(symbol.column).")
            }
            position += 1
            restrictions += 1
            return .compare(field: field.text, op: op, value: try Self.value(value, kind, field: field.text))
        }

        static func value(_ token: Token, _ kind: FieldKind, field: String) throws(GoogleAPIError) -> Value {
            switch kind {
            case .string:
                return .string(token.text)
            case .enumeration(let values):
                if let number = values[token.text] ?? Int(token.text), values.values.contains(number) {
                    return .number(Double(number))
                }
                let names = values.sorted { $0.value < $1.value }.map(\.key).joined(separator: ", ")
                throw .invalidArgument(
                    "filter: \"\(token.text.prefix(100))\" (column \(token.column)) is not a value of \(field): \(names)."
                )
            case .number:
                guard let number = Double(token.text), number.isFinite else {
                    throw .invalidArgument(
                        "filter: \(field) needs a number, not \"\(token.text.prefix(100))\" (column \(token.column))."
                    )
                }
                return .number(number)
            case .timestamp:
                guard let date = RFC3339.parse(token.text) else {
                    throw .invalidArgument(
                        "filter: \(field) needs an RFC 3339 time such as \"2026-01-01T12:00:00Z\", not \"\(token.text.prefix(100))\" (column \(token.column))."
                    )
                }
                return .number(date.timeIntervalSince1970)
            }
        }
    }
}
