import FleetAuthCore
import FleetAuthServerCore
import SwiftProtobuf

/// Request fields carried in the query string, bound as Google's REST transcoding binds them: every field of the
/// request message that the path and the body do not carry, found from the message's descriptor
/// (``ProtoContract``), to any depth through singular message fields (`viewport.low.latitude`, `header.languageCode`).
/// Each parameter names a field path in either spelling (`pageSize` or `page_size`); a repeated field takes the
/// parameter once per value; an enum takes its name or number; Timestamps, Durations and field masks take their JSON
/// form (a mask's paths in either spelling). The bound values become the message's JSON and are decoded by the same
/// mapping as a body, so they are checked the same way. A parameter that names no such field is
/// `INVALID_ARGUMENT`, except Google's system parameters (`key`, `$alt`, `fields`, `prettyPrint`, …), which are
/// ignored.
struct QueryBinding: Sendable {
    /// How a query value is written into JSON.
    enum Kind: Sendable, Equatable {
        /// A JSON string (strings, bytes, 64-bit integers, Timestamps, Durations).
        case string
        /// A JSON number when the value is a number (32-bit integers, floating point, their wrappers, enums by
        /// number), else a string for the mapping to accept (an enum's name) or refuse.
        case number
        /// `true` or `false`.
        case bool
        /// A `google.protobuf.FieldMask`: comma-separated paths, each in either spelling.
        case fieldMask
    }

    struct Field: Sendable, Equatable {
        let kind: Kind
        let repeated: Bool
        /// The field numbers from the request message down to the field.
        var numbers: [Int] = []
    }

    /// The fields, by JSON path (`viewport.low.latitude`).
    let fields: [String: Field]

    static let systemParameters: Set<String> = [
        "key", "alt", "$alt", "fields", "$fields", "prettyPrint", "$prettyPrint", "quotaUser", "callback",
        "access_token", "upload_protocol", "uploadType", "$.xgafv", "$callback",
    ]

    /// The query fields of `message` (a full name): every field the template's variables and the body leave,
    /// none when the body is the whole message.
    init(message: String, binding: HTTPBinding) {
        var fields: [String: Field] = [:]
        guard binding.body != "*" else {
            self.fields = fields
            return
        }
        let bound = Set(binding.template.variables.map { $0.fieldPath.joined(separator: ".") })
        func walk(
            _ name: String,
            jsonPrefix: String,
            protoPrefix: String,
            numbers: [Int],
            visiting: Set<String>
        ) {
            guard let descriptor = ProtoContract.messages[name], visiting.count < 8 else { return }
            for field in descriptor.field {
                let protoPath = protoPrefix + field.name
                let jsonPath = jsonPrefix + field.jsonName
                if bound.contains(protoPath) || (protoPrefix.isEmpty && field.name == binding.body) { continue }
                let repeated = field.label == .repeated
                if let kind = Self.kind(of: field) {
                    fields[jsonPath] = Field(kind: kind, repeated: repeated, numbers: numbers + [Int(field.number)])
                } else if field.type == .message, !repeated {
                    let type = ProtoContract.typeName(field)
                    if !visiting.contains(type) {
                        walk(
                            type,
                            jsonPrefix: jsonPath + ".",
                            protoPrefix: protoPath + ".",
                            numbers: numbers + [Int(field.number)],
                            visiting: visiting.union([type])
                        )
                    }
                }
            }
        }
        walk(message, jsonPrefix: "", protoPrefix: "", numbers: [], visiting: [message])
        self.fields = fields
    }

    /// How a field's value is written, or nil for a message (whose own fields are bound instead).
    static func kind(of field: Google_Protobuf_FieldDescriptorProto) -> Kind? {
        switch field.type {
        case .string, .bytes, .int64, .uint64, .sint64, .fixed64, .sfixed64: return .string
        case .int32, .uint32, .sint32, .fixed32, .sfixed32, .float, .double, .enum: return .number
        case .bool: return .bool
        case .message:
            switch ProtoContract.typeName(field) {
            case "google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.Int64Value",
                "google.protobuf.UInt64Value", "google.protobuf.StringValue", "google.protobuf.BytesValue":
                return .string
            case "google.protobuf.Int32Value", "google.protobuf.UInt32Value", "google.protobuf.FloatValue",
                "google.protobuf.DoubleValue":
                return .number
            case "google.protobuf.BoolValue": return .bool
            case "google.protobuf.FieldMask": return .fieldMask
            default: return nil
            }
        default: return nil
        }
    }

    /// Whether the query binds nothing (only system parameters or none).
    static func isEmpty(_ query: [(name: String, value: String)]) -> Bool {
        query.allSatisfy { systemParameters.contains($0.name) }
    }

    /// The message `M` the query describes, and its field masks as protobuf bytes to merge into it: a mask's paths
    /// are kept as given (either spelling, for ``FieldMasks`` to check and name), where the JSON form would only
    /// take lowerCamel.
    func decode<M: SwiftProtobuf.Message>(_ query: [(name: String, value: String)], as type: M.Type)
        throws(GoogleAPIError) -> (message: M, masks: [UInt8])
    {
        var root = JSONObject()
        var masks: [UInt8] = []
        for (rawName, value) in query {
            if Self.systemParameters.contains(rawName) { continue }
            let path = rawName.split(separator: ".", omittingEmptySubsequences: false).map {
                Self.camelCase(String($0))
            }
            let name = path.joined(separator: ".")
            guard let field = fields[name] else {
                throw .invalidArgument(
                    "Invalid JSON payload received. Unknown name \"\(rawName.prefix(100))\": Cannot bind query parameter."
                )
            }
            let json: JSONValue
            switch field.kind {
            case .string: json = .string(value)
            case .bool:
                guard value == "true" || value == "false" else {
                    throw .invalidArgument("Invalid value at '\(name)' (TYPE_BOOL), \"\(value.prefix(100))\".")
                }
                json = .bool(value == "true")
            case .number:
                json = Int64(value).map(JSONValue.integer) ?? Double(value).map(JSONValue.double) ?? .string(value)
            case .fieldMask:
                // FieldMask.paths is field 1.
                for path in value.split(separator: ",", omittingEmptySubsequences: false) {
                    masks += ProtoWire.string(String(path), at: (field.numbers + [1])[...])
                }
                continue
            }
            try Self.set(json, at: path[...], repeated: field.repeated, in: &root)
        }
        let message =
            root.members.isEmpty
            ? M() : try ProtoJSON.decode(JSONValue.object(root).jsonBytes, as: type, field: "query")
        return (message, masks)
    }

    private static func set(
        _ value: JSONValue,
        at path: ArraySlice<String>,
        repeated: Bool,
        in object: inout JSONObject
    ) throws(GoogleAPIError) {
        guard let key = path.first else { return }
        if path.count == 1 {
            if repeated {
                var values = object[key]?.arrayValue ?? []
                values.append(value)
                object[key] = .array(values)
            } else {
                guard object[key] == nil else {
                    throw .invalidArgument("The query parameter \(path.joined(separator: ".")) is given twice.")
                }
                object[key] = value
            }
            return
        }
        var child = object[key]?.objectValue ?? JSONObject()
        try set(value, at: path.dropFirst(), repeated: repeated, in: &child)
        object[key] = .object(child)
    }

    /// `page_size` → `pageSize`.
    static func camelCase(_ name: String) -> String {
        guard name.utf8.contains(UInt8(ascii: "_")) else { return name }
        var result = ""
        var upper = false
        for character in name {
            if character == "_" {
                upper = true
            } else {
                result += upper ? character.uppercased() : String(character)
                upper = false
            }
        }
        return result
    }
}
