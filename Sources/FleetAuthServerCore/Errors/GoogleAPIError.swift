public import FleetAuthCore

/// An error as Google's APIs answer it, and so as both FleetAuth servers do: a canonical status and a message,
/// sent over REST as Google's JSON error body (a `google.rpc.Status`),
///
/// ```json
/// {"error":{"code":403,"message":"...","status":"PERMISSION_DENIED"}}
/// ```
///
/// with `code` the HTTP status, and over gRPC as the status with the same number and message. A client reads the
/// emulator's errors and the token server's the same way. The message never contains a password, session token
/// or JWT.
///
/// Equality compares every field; a test compares codes: `#expect(error?.code == .notFound)`.
public struct GoogleAPIError: CodedError {
    /// A canonical status (`google.rpc.Code`) with the HTTP status Google's REST front end answers it with.
    ///
    /// | name | HTTP | gRPC |
    /// |---|---|---|
    /// | `INVALID_ARGUMENT` | 400 (413 for ``payloadTooLarge``, 415 for ``unsupportedMediaType``) | 3 |
    /// | `FAILED_PRECONDITION` | 400 | 9 |
    /// | `OUT_OF_RANGE` | 400 | 11 |
    /// | `UNAUTHENTICATED` | 401 | 16 |
    /// | `PERMISSION_DENIED` | 403 | 7 |
    /// | `NOT_FOUND` | 404 | 5 |
    /// | `ALREADY_EXISTS` | 409 | 6 |
    /// | `ABORTED` | 409 | 10 |
    /// | `RESOURCE_EXHAUSTED` | 429 | 8 |
    /// | `CANCELLED` | 499 | 1 |
    /// | `INTERNAL` | 500 | 13 |
    /// | `UNIMPLEMENTED` | 501 | 12 |
    /// | `UNAVAILABLE` | 503 | 14 |
    /// | `DEADLINE_EXCEEDED` | 504 | 4 |
    ///
    /// Codes are static members, so new ones can be added without breaking callers.
    public struct Code: ErrorCode {
        /// The canonical name, such as `PERMISSION_DENIED`.
        public let name: String
        /// The HTTP status of a REST answer.
        public let httpStatus: Int
        /// The number of the gRPC status.
        public let grpcStatus: Int

        private init(_ name: String, http: Int, grpc: Int) {
            self.name = name
            self.httpStatus = http
            self.grpcStatus = grpc
        }

        /// The canonical name, such as `PERMISSION_DENIED`.
        public var rawValue: String { name }

        public static let cancelled = Code("CANCELLED", http: 499, grpc: 1)
        public static let invalidArgument = Code("INVALID_ARGUMENT", http: 400, grpc: 3)
        public static let deadlineExceeded = Code("DEADLINE_EXCEEDED", http: 504, grpc: 4)
        public static let notFound = Code("NOT_FOUND", http: 404, grpc: 5)
        public static let alreadyExists = Code("ALREADY_EXISTS", http: 409, grpc: 6)
        public static let permissionDenied = Code("PERMISSION_DENIED", http: 403, grpc: 7)
        public static let resourceExhausted = Code("RESOURCE_EXHAUSTED", http: 429, grpc: 8)
        public static let failedPrecondition = Code("FAILED_PRECONDITION", http: 400, grpc: 9)
        public static let aborted = Code("ABORTED", http: 409, grpc: 10)
        public static let outOfRange = Code("OUT_OF_RANGE", http: 400, grpc: 11)
        public static let unimplemented = Code("UNIMPLEMENTED", http: 501, grpc: 12)
        public static let `internal` = Code("INTERNAL", http: 500, grpc: 13)
        public static let unavailable = Code("UNAVAILABLE", http: 503, grpc: 14)
        public static let unauthenticated = Code("UNAUTHENTICATED", http: 401, grpc: 16)
        /// A request body over the limit: bad input, answered over REST with HTTP 413 as Google's front end
        /// does, and over gRPC as `RESOURCE_EXHAUSTED`.
        public static let payloadTooLarge = Code("INVALID_ARGUMENT", http: 413, grpc: 8)
        /// A request body that is not JSON where only JSON is read: answered over REST with HTTP 415.
        public static let unsupportedMediaType = Code("INVALID_ARGUMENT", http: 415, grpc: 3)
    }

    /// The status.
    public let code: Code
    /// The message for the caller.
    public let message: String
    /// Seconds after which a refused request may be retried (the `Retry-After` header), for throttling.
    public let retryAfter: Int?

    public init(_ code: Code, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code.name): \(message)" }

    /// Google's JSON error body.
    public var jsonObject: JSONObject {
        [
            "error": .object([
                "code": .integer(Int64(code.httpStatus)),
                "message": .string(message),
                "status": .string(code.name),
            ])
        ]
    }

    public static func invalidArgument(_ message: String) -> Self { Self(.invalidArgument, message) }
    public static func failedPrecondition(_ message: String) -> Self { Self(.failedPrecondition, message) }
    public static func unauthenticated(_ message: String) -> Self { Self(.unauthenticated, message) }
    public static func permissionDenied(_ message: String) -> Self { Self(.permissionDenied, message) }
    public static func notFound(_ message: String) -> Self { Self(.notFound, message) }
    public static func alreadyExists(_ message: String) -> Self { Self(.alreadyExists, message) }
    public static func `internal`(_ message: String) -> Self { Self(.internal, message) }
    public static func unavailable(_ message: String) -> Self { Self(.unavailable, message) }
    /// `RESOURCE_EXHAUSTED` with `Retry-After`.
    public static func tooManyRequests(_ message: String, retryAfter: Int) -> Self {
        Self(.resourceExhausted, message, retryAfter: retryAfter)
    }
}

extension GoogleAPIError {
    /// The status a store's error is answered with, and its message (with `Retry-After: 1` for `unavailable`).
    public init(_ error: StoreError) {
        self =
            switch error.code {
            case .notFound: .notFound(error.message)
            case .alreadyExists: .alreadyExists(error.message)
            case .conflict: .failedPrecondition(error.message)
            // The database is down or did not answer: a client may try again in a second (`Retry-After: 1`).
            case .unavailable: Self(.unavailable, error.message, retryAfter: 1)
            // No answer in time: the outcome is unknown, as Google's DEADLINE_EXCEEDED says of a call.
            case .deadlineExceeded: Self(.deadlineExceeded, error.message)
            default: .internal(error.message)
            }
    }
}
