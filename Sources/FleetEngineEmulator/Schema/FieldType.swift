import FleetAuthCore
import FleetAuthServerSupport

/// The JSON shape of a proto field in the REST mapping, for validating request bodies.
indirect enum FieldType: Sendable {
    case string
    case bool
    /// A JSON integer within bounds (wrapper types such as `Int32Value` are plain numbers).
    case integer(min: Int64, max: Int64)
    /// A finite JSON number within bounds.
    case number(min: Double, max: Double)
    /// An enum, by value name.
    case enumeration([String])
    /// An RFC 3339 timestamp string.
    case timestamp
    /// A duration string such as `"600s"` or `"1.5s"`.
    case duration
    /// A nested message.
    case message(MessageSchema)
    /// A repeated field with at most `maximumCount` elements.
    case repeated(FieldType, maximumCount: Int)
    /// Anything (opaque or not modelled); must still be JSON.
    case any
}

/// The fields of a message, by lowerCamelCase JSON name.
struct MessageSchema: Sendable {
    let name: String
    let fields: [String: FieldType]

    /// `google.type.LatLng`.
    static let latLng = MessageSchema(
        name: "LatLng",
        fields: ["latitude": .number(min: -90, max: 90), "longitude": .number(min: -180, max: 180)]
    )

    /// Checks `object` against the schema; the error names the field path, as Google's messages do.
    func validate(_ object: JSONObject, path: String) throws(FleetEngineError) {
        for member in object {
            guard let type = fields[member.key] else {
                throw .invalidArgument(
                    "Invalid JSON payload received. Unknown name \"\(member.key.prefix(64))\" at '\(path)': Cannot find field."
                )
            }
            try Self.validate(member.value, as: type, path: "\(path).\(member.key)")
        }
    }

    static func validate(_ value: JSONValue, as type: FieldType, path: String) throws(FleetEngineError) {
        if case .null = value { return }
        func wrong(_ expected: String) -> FleetEngineError {
            .invalidArgument("Invalid value at '\(path)' (\(expected)): found a JSON \(value.typeName).")
        }
        switch type {
        case .any:
            return
        case .string:
            guard case .string = value else { throw wrong("TYPE_STRING") }
        case .bool:
            guard case .bool = value else { throw wrong("TYPE_BOOL") }
        case .integer(let minimum, let maximum):
            guard case .integer(let number) = value else { throw wrong("TYPE_INT") }
            guard number >= minimum, number <= maximum else {
                throw .invalidArgument("Invalid value at '\(path)': \(number) is outside \(minimum)...\(maximum).")
            }
        case .number(let minimum, let maximum):
            let number: Double
            switch value {
            case .integer(let integer): number = Double(integer)
            case .double(let double): number = double
            default: throw wrong("TYPE_DOUBLE")
            }
            guard number >= minimum, number <= maximum else {
                throw .invalidArgument("Invalid value at '\(path)': \(number) is outside \(minimum)...\(maximum).")
            }
        case .enumeration(let names):
            guard case .string(let name) = value else { throw wrong("TYPE_ENUM") }
            guard names.contains(name) else {
                throw .invalidArgument(
                    "Invalid value at '\(path)': \"\(name.prefix(64))\" is not one of \(names.joined(separator: ", "))."
                )
            }
        case .timestamp:
            guard case .string(let text) = value else { throw wrong("google.protobuf.Timestamp") }
            guard RFC3339.parse(text) != nil else {
                throw .invalidArgument(
                    "Invalid value at '\(path)': \"\(text.prefix(64))\" is not an RFC 3339 timestamp.")
            }
        case .duration:
            guard case .string(let text) = value else { throw wrong("google.protobuf.Duration") }
            guard text.hasSuffix("s"), let seconds = Double(text.dropLast()), seconds.isFinite else {
                throw .invalidArgument(
                    "Invalid value at '\(path)': \"\(text.prefix(64))\" is not a duration like \"600s\".")
            }
        case .message(let schema):
            guard case .object(let object) = value else { throw wrong(schema.name) }
            try schema.validate(object, path: path)
        case .repeated(let element, let maximumCount):
            guard case .array(let elements) = value else { throw wrong("repeated") }
            guard elements.count <= maximumCount else {
                throw .invalidArgument("Invalid value at '\(path)': at most \(maximumCount) elements are allowed.")
            }
            for (index, item) in elements.enumerated() {
                try validate(item, as: element, path: "\(path)[\(index)]")
            }
        }
    }
}
