public import FleetAuthCore

/// An error as Fleet Engine returns it over REST: a `google.rpc.Status` in Google's JSON error body,
/// `{"error":{"code":403,"message":"...","status":"PERMISSION_DENIED"}}`, with `code` the HTTP status.
///
/// Equality compares the status code only.
public struct FleetEngineError: Error, Hashable, CustomStringConvertible {
    /// A canonical `google.rpc.Code` and the HTTP status it maps to.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The canonical name, such as `PERMISSION_DENIED`.
        public let name: String
        /// The HTTP status Google's REST transcoding uses for it.
        public let httpStatus: Int

        public var description: String { name }

        public static let invalidArgument = Code(name: "INVALID_ARGUMENT", httpStatus: 400)
        public static let failedPrecondition = Code(name: "FAILED_PRECONDITION", httpStatus: 400)
        public static let unauthenticated = Code(name: "UNAUTHENTICATED", httpStatus: 401)
        public static let permissionDenied = Code(name: "PERMISSION_DENIED", httpStatus: 403)
        public static let notFound = Code(name: "NOT_FOUND", httpStatus: 404)
        /// A request body over the limit: bad input, answered with HTTP 413 as Google's front end does.
        public static let payloadTooLarge = Code(name: "INVALID_ARGUMENT", httpStatus: 413)
        public static let alreadyExists = Code(name: "ALREADY_EXISTS", httpStatus: 409)
        public static let aborted = Code(name: "ABORTED", httpStatus: 409)
        public static let resourceExhausted = Code(name: "RESOURCE_EXHAUSTED", httpStatus: 429)
        public static let `internal` = Code(name: "INTERNAL", httpStatus: 500)
        public static let unimplemented = Code(name: "UNIMPLEMENTED", httpStatus: 501)
        public static let unavailable = Code(name: "UNAVAILABLE", httpStatus: 503)
    }

    /// The status code.
    public let code: Code
    /// The message for the caller. It never echoes a token.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.name): \(message)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Google's JSON error body.
    public var jsonObject: JSONObject {
        JSONObject([
            "error": .object(
                JSONObject([
                    "code": .integer(Int64(code.httpStatus)),
                    "message": .string(message),
                    "status": .string(code.name),
                ])
            )
        ])
    }

    public static func invalidArgument(_ message: String) -> Self { Self(.invalidArgument, message) }
    public static func failedPrecondition(_ message: String) -> Self { Self(.failedPrecondition, message) }
    public static func unauthenticated(_ message: String) -> Self { Self(.unauthenticated, message) }
    public static func permissionDenied(_ message: String) -> Self { Self(.permissionDenied, message) }
    public static func notFound(_ message: String) -> Self { Self(.notFound, message) }
    public static func alreadyExists(_ message: String) -> Self { Self(.alreadyExists, message) }
}
