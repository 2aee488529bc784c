import Foundation

/// The rules Fleet Engine applies to vehicle, trip, task and tracking IDs, shared by every module.
///
/// From the `maps.fleetengine.v1` and `maps.fleetengine.delivery.v1` protos: an ID is valid Unicode, at most 64
/// characters, NFC-normalized, and has none of `/ : ? , #`. FleetAuth also refuses control, format (zero-width) and
/// whitespace characters (rules J7 and A6 of FleetAuthJWT's *Verification rules* article), the path steps `.` and
/// `..`, and percent-escapes (`%2F`): an ID is one path segment of a REST URL, which a client or proxy would
/// normalize or decode, so such an ID could be created but never reached again. It refuses `*` alone, the wildcard
/// claim value, which no claim could name apart from every resource of its kind. IDs feed lookups and are compared
/// exactly, never normalized first.
public enum FleetEngineID {
    /// The longest ID, in Unicode scalars.
    public static let maximumLength = 64

    /// The wildcard claim value: every resource of the claim's kind.
    public static let wildcard = "*"

    /// Checks `id` and throws an error naming `field` and the rule it breaks.
    public static func validate(_ id: String, field: String) throws(FleetEngineIDError) {
        if let problem = problem(with: id) {
            throw FleetEngineIDError(field: field, problem: problem)
        }
    }

    /// Whether `id` follows the ID rules.
    public static func isValid(_ id: String) -> Bool { problem(with: id) == nil }

    static func problem(with id: String) -> String? {
        if id.isEmpty { return "must not be empty" }
        if id == "." || id == ".." { return "must not be \".\" or \"..\"" }
        // A resource named `*` could never be told from the wildcard claim that covers every resource of its kind.
        if id == wildcard { return "must not be \"*\", the wildcard claim value" }
        var count = 0
        var asciiOnly = true
        // The last two scalars, to spot a percent-escape (`%` and two hex digits).
        var previous: (Unicode.Scalar?, Unicode.Scalar?) = (nil, nil)
        for scalar in id.unicodeScalars {
            count += 1
            defer { previous = (previous.1, scalar) }
            if previous.0 == "%", let digit = previous.1, digit.properties.isASCIIHexDigit,
                scalar.properties.isASCIIHexDigit
            {
                return "must not contain percent-escapes such as %2F"
            }
            if scalar.isASCII {
                // Printable ASCII is always allowed except the five separators; the rest of ASCII is control
                // characters and space.
                switch scalar {
                case "/", ":", "?", ",", "#":
                    return "must not contain '\(scalar)'"
                case " ", "\u{7F}", "\u{0}"..."\u{1F}":
                    return "must not contain control, format, whitespace or unassigned characters"
                default:
                    continue
                }
            }
            asciiOnly = false
            switch scalar.properties.generalCategory {
            case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .surrogate,
                .unassigned, .privateUse:
                return "must not contain control, format, whitespace or unassigned characters"
            default:
                break
            }
        }
        if count > maximumLength { return "must be at most \(maximumLength) characters" }
        // Swift's `==` treats canonically equivalent strings as equal, so compare the bytes.
        if !asciiOnly && !id.precomposedStringWithCanonicalMapping.hasSameBytes(as: id) {
            return "must be NFC-normalized Unicode"
        }
        return nil
    }
}

/// An ID that breaks the Fleet Engine ID rules.
public struct FleetEngineIDError: Error, Hashable, CustomStringConvertible {
    /// The field or claim that holds the ID, such as `vehicleId` or `vehicleid`.
    public let field: String
    /// The rule the ID breaks.
    public let problem: String

    public var description: String { "\(field) \(problem)" }
}
