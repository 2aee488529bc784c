package import FleetAuthCore
package import FleetAuthServerCore
package import Hummingbird

/// Request bodies as strict JSON objects (one parser for the whole project: no duplicate names, strict UTF-8,
/// bounded depth), with a size limit checked before anything is buffered beyond it.
package enum JSONRequestBody {
    /// How deep a request's JSON may nest.
    package static let maximumDepth = 64

    /// The body as a JSON object. An empty (or all-whitespace) body is an empty object, as Google's REST front
    /// end reads an empty message.
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - limit: the largest body accepted, in bytes; a larger one (declared or sent) is 413.
    ///   - field: the message's name in errors (`vehicle`, `request`).
    package static func read(_ request: Request, limit: Int, field: String) async throws(GoogleAPIError) -> JSONObject {
        let tooLarge = GoogleAPIError(.payloadTooLarge, "The request body is larger than \(limit) bytes.")
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit { throw tooLarge }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw tooLarge
        }
        return try parse(Array(buffer.readableBytesView), field: field)
    }

    /// Bytes as a JSON object, with the same rules and messages as ``read(_:limit:field:)``.
    package static func parse(_ bytes: [UInt8], field: String) throws(GoogleAPIError) -> JSONObject {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return JSONObject() }
        do {
            return try StrictJSONParser(maximumDepth: maximumDepth).parseObject(bytes)
        } catch {
            throw .invalidArgument("Invalid JSON payload received for '\(field)': \(error.message).")
        }
    }

    /// The string member `key` of `object`, or `INVALID_ARGUMENT` naming it.
    package static func string(_ object: JSONObject, _ key: String) throws(GoogleAPIError) -> String {
        guard case .string(let value)? = object[key] else { throw .invalidArgument("\(key) is required (a string).") }
        return value
    }
}
