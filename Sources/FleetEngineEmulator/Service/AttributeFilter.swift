import FleetAuthServerSupport

/// The filter of ListVehicles and SearchVehicles: the part of [AIP-160](https://google.aip.dev/160) Fleet Engine
/// supports, restrictions on vehicle attributes compared as strings:
///
/// ```
/// attributes.tier = "premium" AND (attributes.seats = "6" OR attributes.accessible = "true")
/// ```
///
/// A restriction is `attributes.<key>` `=` or `!=` a value, quoted (`"10"`) or bare (`premium`); restrictions combine
/// with `AND`, `OR` (which binds tighter than `AND`, as AIP-160 says), `NOT`, `-` and parentheses. At most 50
/// restrictions, 32 levels of nesting (each `NOT`, `-` and parenthesis counts) and 4,096 bytes: the parser and the
/// evaluator recurse, so a filter an attacker writes must not be allowed to nest without bound. Anything else is
/// `INVALID_ARGUMENT`, naming the limit.
struct AttributeFilter: Sendable {
    indirect enum Expression: Sendable, Hashable {
        case compare(key: String, value: String, equal: Bool)
        case and([Expression])
        case or([Expression])
        case not(Expression)
    }

    static let maximumRestrictions = 50
    static let maximumDepth = 32
    static let maximumLength = 4096

    let expression: Expression

    /// Parses `text`; an empty filter matches every vehicle.
    init(_ text: String) throws(GoogleAPIError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw .invalidArgument("filter is longer than \(Self.maximumLength) bytes.")
        }
        var parser = Parser(tokens: try Self.tokens(text))
        expression = try parser.conjunction()
        guard parser.position == parser.tokens.count else {
            throw .invalidArgument("filter: unexpected \"\(parser.tokens[parser.position].text)\".")
        }
        guard parser.restrictions <= Self.maximumRestrictions else {
            throw .invalidArgument("filter has more than \(Self.maximumRestrictions) restrictions.")
        }
    }

    /// Whether attributes (string forms by key) satisfy the filter.
    func matches(_ attributes: [String: String]) -> Bool { Self.evaluate(expression, attributes) }

    /// The filter as the condition a store's query answers.
    var condition: AttributeCondition { Self.condition(expression) }

    private static func condition(_ expression: Expression) -> AttributeCondition {
        switch expression {
        case .compare(let key, let value, let equal):
            equal ? .equals(key: key, value: value) : .not(.equals(key: key, value: value))
        case .and(let parts): .all(parts.map(condition))
        case .or(let parts): .any(parts.map(condition))
        case .not(let inner): .not(condition(inner))
        }
    }

    private static func evaluate(_ expression: Expression, _ attributes: [String: String]) -> Bool {
        switch expression {
        case .compare(let key, let value, let equal): (attributes[key] == value) == equal
        case .and(let parts): parts.allSatisfy { evaluate($0, attributes) }
        case .or(let parts): parts.contains { evaluate($0, attributes) }
        case .not(let inner): !evaluate(inner, attributes)
        }
    }

    struct Token: Sendable, Hashable {
        enum Kind: Sendable, Hashable { case word, quoted, symbol }
        let kind: Kind
        let text: String
    }

    static func tokens(_ text: String) throws(GoogleAPIError) -> [Token] {
        var tokens: [Token] = []
        var characters = Array(text)[...]
        while let first = characters.first {
            if first.isWhitespace {
                characters = characters.dropFirst()
            } else if first == "\"" {
                var value = ""
                characters = characters.dropFirst()
                var closed = false
                while let next = characters.first {
                    characters = characters.dropFirst()
                    if next == "\\", let escaped = characters.first {
                        value.append(escaped)
                        characters = characters.dropFirst()
                    } else if next == "\"" {
                        closed = true
                        break
                    } else {
                        value.append(next)
                    }
                }
                guard closed else { throw .invalidArgument("filter has an unterminated string.") }
                tokens.append(Token(kind: .quoted, text: value))
            } else if first == "!" && characters.dropFirst().first == "=" {
                tokens.append(Token(kind: .symbol, text: "!="))
                characters = characters.dropFirst(2)
            } else if "()=-".contains(first) {
                tokens.append(Token(kind: .symbol, text: String(first)))
                characters = characters.dropFirst()
            } else {
                let word = characters.prefix { !$0.isWhitespace && !"()=!\"".contains($0) }
                guard !word.isEmpty else { throw .invalidArgument("filter: unexpected \"\(first)\".") }
                tokens.append(Token(kind: .word, text: String(word)))
                characters = characters.dropFirst(word.count)
            }
        }
        return tokens
    }

    private struct Parser {
        let tokens: [Token]
        var position = 0
        var restrictions = 0
        var depth = 0

        init(tokens: [Token]) { self.tokens = tokens }

        /// One level deeper (a `NOT`, `-` or parenthesis), within ``AttributeFilter/maximumDepth``.
        mutating func enter() throws(GoogleAPIError) {
            depth += 1
            guard depth <= AttributeFilter.maximumDepth else {
                throw .invalidArgument(
                    "filter nests deeper than \(AttributeFilter.maximumDepth) levels (NOT, - and parentheses count)."
                )
            }
        }

        var current: Token? { position < tokens.count ? tokens[position] : nil }

        mutating func take(_ text: String) -> Bool {
            guard let current, current.text == text, current.kind != .quoted else { return false }
            position += 1
            return true
        }

        /// `a AND b`, or `a b` (AIP-160's implicit AND).
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
            if take("(") {
                try enter()
                defer { depth -= 1 }
                let inner = try conjunction()
                guard take(")") else { throw .invalidArgument("filter: a \"(\" is not closed.") }
                return inner
            }
            guard let field = current, field.kind == .word, field.text.hasPrefix("attributes."),
                field.text.count > "attributes.".count
            else {
                throw .invalidArgument(
                    "filter: expected a restriction on attributes.<key>, found \"\(current?.text.prefix(100) ?? "the end")\"."
                )
            }
            position += 1
            let equal: Bool
            if take("=") {
                equal = true
            } else if take("!=") {
                equal = false
            } else {
                throw .invalidArgument("filter: \(field.text) must be compared with = or !=.")
            }
            guard let value = current, value.kind != .symbol else {
                throw .invalidArgument("filter: \(field.text) needs a value.")
            }
            position += 1
            restrictions += 1
            return .compare(key: String(field.text.dropFirst("attributes.".count)), value: value.text, equal: equal)
        }
    }
}
