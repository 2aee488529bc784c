import FleetAuthServerCore
import FleetAuthServerSupport

/// A path template of a `google.api.http` rule, such as `/v1/{name=providers/*/vehicles/*}:updateAttributes`, by
/// HttpRule's grammar:
///
/// ```
/// Template = "/" Segments [ Verb ] ;
/// Segments = Segment { "/" Segment } ;
/// Segment  = "*" | "**" | LITERAL | Variable ;
/// Variable = "{" FieldPath [ "=" Segments ] "}" ;
/// FieldPath = IDENT { "." IDENT } ;
/// Verb     = ":" LITERAL ;
/// ```
///
/// `{name}` is `{name=*}`; `**` (zero or more segments) may only come last, and not before a verb.
struct PathTemplate: Sendable, Equatable, CustomStringConvertible {
    enum Segment: Sendable, Equatable {
        case literal(String)
        /// One segment.
        case wildcard
        /// The rest of the path: zero or more segments.
        case recursiveWildcard
    }

    /// A request field bound to a run of segments.
    struct Variable: Sendable, Equatable {
        /// The field path, in proto names (`delivery_vehicle.name`).
        let fieldPath: [String]
        /// The segments that make its value, joined by `/`.
        let segments: Range<Int>
    }

    /// A template that does not follow the grammar.
    struct Malformed: Error, CustomStringConvertible {
        let template: String
        let problem: String
        var description: String { "The path template \"\(template)\" \(problem)." }
    }

    let segments: [Segment]
    let variables: [Variable]
    /// The custom verb after the last segment (`search` in `…/vehicles:search`).
    let verb: String?
    /// The name each wildcard's value is known by in routes and errors, by segment index: the literal before it in
    /// its variable, in the singular (`providers/*` → `provider`, `taskTrackingInfo/*` → `taskTrackingInfo`), else the
    /// variable's last field name. Two wildcards never share one.
    let parameterNames: [Int: String]
    let description: String

    init(_ text: String) throws(Malformed) {
        description = text
        var segments: [Segment] = []
        var variables: [Variable] = []
        var verb: String?
        var rest = Substring(text)
        func fail(_ problem: String) -> Malformed { Malformed(template: text, problem: problem) }
        guard rest.first == "/" else { throw fail("does not start with /") }
        rest = rest.dropFirst()
        /// One segment up to `/`, `}`, `:` (outside a variable) or the end.
        func segment(inVariable: Bool) throws(Malformed) -> Segment {
            let end = rest.firstIndex { $0 == "/" || $0 == "}" || $0 == "{" || (!inVariable && $0 == ":") }
            let token = rest[..<(end ?? rest.endIndex)]
            rest = rest[token.endIndex...]
            switch token {
            case "": throw fail("has an empty segment")
            case "*": return .wildcard
            case "**": return .recursiveWildcard
            default:
                guard !token.contains("*") else { throw fail("has a segment that mixes * with text") }
                return .literal(String(token))
            }
        }
        while true {
            if rest.first == "{" {
                rest = rest.dropFirst()
                guard let close = rest.firstIndex(of: "}") else { throw fail("has an unclosed {") }
                let inside = rest[..<close]
                let fieldText = inside.prefix { $0 != "=" }
                let path = fieldText.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard path.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } })
                else { throw fail("names a field badly: \"\(fieldText)\"") }
                let start = segments.count
                if fieldText.endIndex == inside.endIndex {
                    segments.append(.wildcard)
                    rest = rest[close...]
                } else {
                    rest = rest[inside.index(after: fieldText.endIndex)...]
                    while true {
                        segments.append(try segment(inVariable: true))
                        guard rest.first == "/" else { break }
                        rest = rest.dropFirst()
                    }
                }
                guard rest.first == "}" else { throw fail("has a variable that does not end with }") }
                rest = rest.dropFirst()
                guard !variables.contains(where: { $0.fieldPath == path }) else { throw fail("binds a field twice") }
                variables.append(Variable(fieldPath: path, segments: start..<segments.count))
            } else {
                segments.append(try segment(inVariable: false))
            }
            if rest.first == "/" {
                rest = rest.dropFirst()
                continue
            }
            if rest.first == ":" {
                verb = String(rest.dropFirst())
                guard let verb, !verb.isEmpty, !verb.contains(where: { "/{}*:".contains($0) }) else {
                    throw fail("has a malformed verb")
                }
                rest = rest[rest.endIndex...]
            }
            guard rest.isEmpty else { throw fail("has \"\(rest)\" where a segment or the end should be") }
            break
        }
        if let index = segments.firstIndex(of: .recursiveWildcard) {
            guard index == segments.count - 1 else { throw fail("has ** before its last segment") }
            // HttpRule allows `**:verb`; the router matches `**` only as the whole rest of the path. No Fleet Engine
            // rule has either, so this is refused when the rules are read, not met by a route that never matches.
            guard verb == nil else { throw fail("has ** followed by a verb, which the emulator's router cannot match") }
        }
        self.segments = segments
        self.variables = variables
        self.verb = verb
        var names: [Int: String] = [:]
        for (index, segment) in segments.enumerated() where segment == .wildcard {
            var name: String
            let variable = variables.first { $0.segments.contains(index) }
            if let variable, index > variable.segments.lowerBound, case .literal(let collection) = segments[index - 1] {
                name = collection.hasSuffix("s") ? String(collection.dropLast()) : collection
            } else {
                name = variable?.fieldPath.last ?? "segment"
            }
            if names.values.contains(name) { name += String(index) }
            names[index] = name
        }
        self.parameterNames = names
    }

    /// The template as Hummingbird routes it: `v1/providers/{provider}/vehicles/{vehicle}:updateAttributes`.
    var routerPath: String {
        var parts = segments.enumerated().map { index, segment in
            switch segment {
            case .literal(let text): text
            case .wildcard: "{\(parameterNames[index] ?? "segment")}"
            case .recursiveWildcard: "**"
            }
        }
        if let verb, !parts.isEmpty { parts[parts.count - 1] += ":" + verb }
        return parts.joined(separator: "/")
    }

    /// Each variable's value from a matched request: every wildcard's segment (`parameter` gives it by name, raw)
    /// percent-decoded once and checked against the ID rules, so a decoded `/` is an invalid ID, never a path step;
    /// the rest of the path for `**`.
    func values(
        parameter: (String) -> String?,
        rest: () -> [Substring]
    ) throws(GoogleAPIError) -> [(fieldPath: [String], value: String)] {
        var values: [(fieldPath: [String], value: String)] = []
        values.reserveCapacity(variables.count)
        for variable in variables {
            var parts: [String] = []
            for index in variable.segments {
                switch segments[index] {
                case .literal(let text): parts.append(text)
                case .wildcard:
                    let name = parameterNames[index] ?? "segment"
                    guard let raw = parameter(name), let decoded = RequestText.percentDecoded(raw) else {
                        throw .invalidArgument("The \(name) in the path is not valid percent-encoding.")
                    }
                    parts.append(try ResourceName.id(decoded, field: name == "provider" ? "provider" : "\(name) ID"))
                case .recursiveWildcard:
                    for raw in rest() {
                        guard let decoded = RequestText.percentDecoded(String(raw)) else {
                            throw .invalidArgument("The path is not valid percent-encoding.")
                        }
                        parts.append(decoded)
                    }
                }
            }
            values.append((variable.fieldPath, parts.joined(separator: "/")))
        }
        return values
    }
}
