public import FleetAuthCore
public import Hummingbird

/// An error the token server answers with: an HTTP status and Google's JSON error body
/// `{"error":{"code":403,"message":"...","status":"PERMISSION_DENIED"}}`, the shape Fleet Engine uses too, so a
/// client reads both the same way. The message never contains a password, session token or JWT.
public struct TokenServerError: Error, Hashable, CustomStringConvertible, HTTPResponseError {
    /// The HTTP status.
    public let status: HTTPResponse.Status
    /// The canonical status name, such as `PERMISSION_DENIED`.
    public let statusName: String
    /// The message for the caller.
    public let message: String
    /// Seconds after which a throttled request may be retried (`Retry-After`).
    public let retryAfter: Int?

    init(_ status: HTTPResponse.Status, _ statusName: String, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.statusName = statusName
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(statusName): \(message)" }

    static func invalidArgument(_ message: String) -> Self { Self(.badRequest, "INVALID_ARGUMENT", message) }
    static func unauthenticated(_ message: String) -> Self { Self(.unauthorized, "UNAUTHENTICATED", message) }
    static func permissionDenied(_ message: String) -> Self { Self(.forbidden, "PERMISSION_DENIED", message) }
    static func notFound(_ message: String) -> Self { Self(.notFound, "NOT_FOUND", message) }
    static func alreadyExists(_ message: String) -> Self { Self(.conflict, "ALREADY_EXISTS", message) }
    static func internalError(_ message: String) -> Self { Self(.internalServerError, "INTERNAL", message) }
    static func tooManyRequests(_ message: String, retryAfter: Int) -> Self {
        Self(.tooManyRequests, "RESOURCE_EXHAUSTED", message, retryAfter: retryAfter)
    }

    /// Google's JSON error body.
    public var jsonObject: JSONObject {
        [
            "error": .object([
                "code": .integer(Int64(status.code)),
                "message": .string(message),
                "status": .string(statusName),
            ])
        ]
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(
            status: status, headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(jsonObject).jsonText)))
    }
}
