import FleetAuthCore
import FleetAuthServerSupport
import Foundation
import Hummingbird

/// Reading path, query and body values with Fleet Engine's error messages.
struct RequestReading: Sendable {
    /// The largest request body accepted, in bytes.
    let maximumBodySize: Int

    /// A resource ID from the path or query, checked against the ID rules.
    static func id(_ value: String?, field: String) throws(FleetEngineError) -> String {
        guard let value, !value.isEmpty else { throw .invalidArgument("\(field) is required.") }
        do {
            try FleetEngineID.validate(value, field: field)
        } catch {
            throw .invalidArgument("Invalid \(error.field): \(error.problem).")
        }
        return value
    }

    /// The request body as a strict JSON object; an empty body is an empty object.
    func body(_ request: Request, field: String) async throws(FleetEngineError) -> JSONObject {
        try await JSONRequestBody.read(request, limit: maximumBodySize, field: field)
    }

    /// The paths of an `updateMask` query parameter (comma-separated; at least one).
    static func updateMask(_ value: String?) throws(FleetEngineError) -> [String] {
        guard let value else { throw .invalidArgument("updateMask is required and must list at least one field.") }
        let paths = value.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard !paths.isEmpty, !paths.contains(where: \.isEmpty) else {
            throw .invalidArgument("updateMask must list at least one field, separated by commas.")
        }
        return paths
    }

    /// The JSON fields an update mask names, refusing immutable and unknown paths (`message` names the type).
    static func maskFields(
        _ paths: [String],
        updatable: [String: String],
        immutable: Set<String>,
        message: String
    ) throws(FleetEngineError) -> [String] {
        var fields: [String] = []
        for path in paths {
            if immutable.contains(path) {
                throw .invalidArgument("updateMask path \"\(path)\" names a field that cannot be updated.")
            }
            guard let field = updatable[path] else {
                throw .invalidArgument("updateMask path \"\(path.prefix(64))\" is not a \(message) field.")
            }
            fields.append(field)
        }
        return fields
    }

    /// `lowerCamelCase` to `snake_case`, as proto field paths are spelled.
    static func snakeCase(_ camel: String, separator: Character = "_") -> String {
        var result = ""
        for character in camel {
            if character.isUppercase {
                result.append(separator)
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// Page size and the position after which a page starts.
    static func page(size: String?, token: String?, defaultSize: Int = 100, maximumSize: Int = 1000)
        throws(FleetEngineError) -> (size: Int, afterID: String?)
    {
        var pageSize = defaultSize
        if let size {
            guard let value = Int(size), value >= 0 else {
                throw .invalidArgument("pageSize must be a non-negative integer.")
            }
            pageSize = value == 0 ? defaultSize : min(value, maximumSize)
        }
        var afterID: String?
        if let token, !token.isEmpty {
            guard let bytes = Base64URL.decode(token), UTF8Validation.isValid(bytes) else {
                throw .invalidArgument("pageToken is not a token this server issued.")
            }
            afterID = String(decoding: bytes, as: UTF8.self)
        }
        return (pageSize, afterID)
    }

    /// The token for the page after `lastID`.
    static func pageToken(after lastID: String) -> String { Base64URL.encode(Array(lastID.utf8)) }
}
