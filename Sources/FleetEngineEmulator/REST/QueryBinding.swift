import FleetAuthCore
import FleetAuthServerSupport
import Hummingbird
import SwiftProtobuf

/// Request fields carried in the query string, bound as Google's REST transcoding binds them: each parameter is a
/// field path in either spelling (`pageSize` or `page_size`, `viewport.low.latitude`), a repeated field takes the
/// parameter once per value. The bound values become the message's JSON and are decoded by the same mapping as a
/// body, so they are checked the same way. A parameter that names no field is `INVALID_ARGUMENT`, except Google's
/// system parameters (`key`, `alt`, `fields`, `prettyPrint`, ...), which are ignored.
struct QueryBinding: Sendable {
    /// How a query value is written into JSON.
    enum Kind: Sendable {
        /// A JSON string (strings, enums by name, Timestamps, Durations, 64-bit integers).
        case string
        /// A JSON number when the value is a decimal integer (int32 fields, wrappers, enums by number), else a
        /// string for the mapping to refuse or accept.
        case number
        /// `true` or `false`.
        case bool
        /// A repeated field of strings or enums.
        case repeated
    }

    /// The fields, by JSON path (`viewport.low.latitude`).
    let fields: [String: Kind]

    static let systemParameters: Set<String> = [
        "key", "alt", "$alt", "fields", "$fields", "prettyPrint", "$prettyPrint", "quotaUser", "callback",
        "access_token", "upload_protocol", "uploadType", "$.xgafv",
    ]

    /// The request header's fields, accepted by every method.
    static let header: [String: Kind] = [
        "header.languageCode": .string, "header.regionCode": .string, "header.sdkVersion": .string,
        "header.osVersion": .string, "header.deviceModel": .string, "header.sdkType": .number,
        "header.mapsSdkVersion": .string, "header.navSdkVersion": .string, "header.platform": .number,
        "header.manufacturer": .string, "header.androidApiLevel": .number, "header.traceId": .string,
    ]

    init(_ fields: [String: Kind]) {
        self.fields = fields.merging(Self.header) { own, _ in own }
    }

    /// The message `M` the query describes, with `extra` members (from the path) added.
    func decode<M: SwiftProtobuf.Message>(
        _ query: [(name: String, value: String)],
        as type: M.Type,
        adding extra: JSONObject = [:]
    ) throws(GoogleAPIError) -> M {
        var root = extra
        for (rawName, value) in query {
            if Self.systemParameters.contains(rawName) { continue }
            let path = rawName.split(separator: ".", omittingEmptySubsequences: false).map {
                Self.camelCase(String($0))
            }
            let name = path.joined(separator: ".")
            guard let kind = fields[name] else {
                throw .invalidArgument(
                    "Invalid JSON payload received. Unknown name \"\(rawName.prefix(100))\": Cannot bind query parameter."
                )
            }
            let json: JSONValue
            switch kind {
            case .string: json = .string(value)
            case .bool:
                guard value == "true" || value == "false" else {
                    throw .invalidArgument("Invalid value at '\(name)' (TYPE_BOOL), \"\(value.prefix(100))\".")
                }
                json = .bool(value == "true")
            case .number:
                json = Int64(value).map(JSONValue.integer) ?? Double(value).map(JSONValue.double) ?? .string(value)
            case .repeated: json = .string(value)
            }
            try Self.set(json, at: path[...], repeated: kind == .repeated, in: &root)
        }
        return try ProtoJSON.decode(JSONValue.object(root).jsonBytes, as: type, field: "query")
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
