import FleetAuthCore
import FleetAuthServerCore
import Foundation
import SwiftProtobuf

/// Request fields carried in the query string, bound as Google's REST transcoding binds them: every field of the
/// request message that the path and the body do not carry, found from the message's descriptor
/// (``ProtoContract``), to any depth through singular message fields (`viewport.low.latitude`, `header.languageCode`).
/// Each parameter names a field path in either spelling (`pageSize` or `page_size`); a repeated field takes the
/// parameter once per value; an enum takes the name or the number of one of its declared values (any other is
/// refused before a message is built: SwiftProtobuf would keep a number past 32 bits as an unrecognized value that
/// it cannot serialize); Timestamps, Durations and field masks take their JSON form (a mask's paths in either
/// spelling). The bound values become the message's JSON and are decoded by the same mapping as a body, so they are
/// checked the same way. A parameter that names no such field is
/// `INVALID_ARGUMENT`, except Google's system parameters (`key`, `$alt`, `fields`, `prettyPrint`, …), which are
/// ignored.
struct QueryBinding: Sendable {
    /// How a query value is written into JSON.
    enum Kind: Sendable, Equatable {
        /// A JSON string (strings, bytes, 64-bit integers, Timestamps, Durations).
        case string
        /// A JSON number when the value is a number (32-bit integers, floating point, their wrappers), else a
        /// string for the mapping to refuse.
        case number
        /// One of an enum's declared values, by name or number; any other value is refused by the binding itself.
        case enumeration(EnumValues)
        /// `true` or `false`.
        case bool
        /// A `google.protobuf.FieldMask`: comma-separated paths, each in either spelling.
        case fieldMask
    }

    /// The values an enum declares.
    struct EnumValues: Sendable, Equatable {
        let names: Set<String>
        let numbers: Set<Int>

        /// No value: the enum is not declared in the contract.
        static let none = EnumValues(names: [], numbers: [])

        private init(names: Set<String>, numbers: Set<Int>) {
            self.names = names
            self.numbers = numbers
        }

        /// The declared values of enum `name` (a full name), or nil when the contract does not declare it.
        init?(_ name: String) {
            guard let declared = ProtoContract.enums[name] else { return nil }
            names = Set(declared.value.map(\.name))
            numbers = Set(declared.value.map { Int($0.number) })
        }

        /// The JSON value of `text`, or nil when it is neither a declared name nor a declared number.
        func json(_ text: String) -> JSONValue? {
            if names.contains(text) { return .string(text) }
            guard let number = Int(text), numbers.contains(number) else { return nil }
            return .integer(Int64(number))
        }
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
        case .int32, .uint32, .sint32, .fixed32, .sfixed32, .float, .double: return .number
        case .enum:
            // Every enum of a Fleet Engine request is declared in the contract; an undeclared one binds no value.
            return .enumeration(EnumValues(ProtoContract.typeName(field)) ?? EnumValues.none)
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

    /// The parameters of a query string in order, decoded as HTML forms and Google's front end decode them: `+` is
    /// a space, then percent-escapes are decoded (names too: Google's REST clients send `%24alt` for `$alt`). A
    /// parameter that is not valid percent-encoding is kept as it came, for the binding to refuse by name.
    static func items(of query: String) -> [(name: String, value: String)] {
        func decode(_ part: Substring) -> String {
            let spaced =
                part.utf8.contains(UInt8(ascii: "+")) ? part.replacingOccurrences(of: "+", with: " ") : String(part)
            guard spaced.utf8.contains(UInt8(ascii: "%")) else { return spaced }
            return spaced.removingPercentEncoding ?? spaced
        }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return (decode(pair), "") }
            return (decode(pair[..<equals]), decode(pair[pair.index(after: equals)...]))
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
                if let integer = Int64(value) {
                    json = .integer(integer)
                } else if let number = Double(value) {
                    // `1e400` is infinite, `nan` no number: neither is a value of any field.
                    guard number.isFinite else {
                        throw .invalidArgument(
                            "Invalid value at '\(name)', \"\(value.prefix(100))\": not a finite number."
                        )
                    }
                    json = .double(number)
                } else {
                    json = .string(value)
                }
            case .enumeration(let values):
                guard let declared = values.json(value) else {
                    throw .invalidArgument(
                        "Invalid value at '\(name)' (TYPE_ENUM), \"\(value.prefix(100))\": not one of the enum's values."
                    )
                }
                json = declared
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
