public import FleetAuthCore

/// A failed Fleet Engine call: Google's error body (`{"error":{"code","message","status"}}`) as a typed error, or
/// what kept the call from being answered (no token, no connection, an unreadable answer).
public struct FleetEngineClientError: CodedError {
    /// Google's canonical status names for answers from Fleet Engine (`PERMISSION_DENIED`), and three client-side
    /// codes in lowercase (`token_unavailable`, `unreachable`, `invalid_response`). Stable, and safe for logs and
    /// metric labels. Codes are static members, so new ones can be added without breaking callers.
    public struct Code: ErrorCode {
        /// The status name or client-side code.
        public let rawValue: String

        private init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code named `rawValue`, if it is one of the known codes.
        public init?(rawValue: String) {
            guard let code = Self.all.first(where: { $0.rawValue == rawValue }) else { return nil }
            self = code
        }

        public static let invalidArgument = Code("INVALID_ARGUMENT")
        public static let failedPrecondition = Code("FAILED_PRECONDITION")
        public static let outOfRange = Code("OUT_OF_RANGE")
        /// 401: the token was refused, also after one retry with a fresh token.
        public static let unauthenticated = Code("UNAUTHENTICATED")
        /// 403: the token is valid but does not allow this call. Never retried.
        public static let permissionDenied = Code("PERMISSION_DENIED")
        public static let notFound = Code("NOT_FOUND")
        public static let alreadyExists = Code("ALREADY_EXISTS")
        public static let aborted = Code("ABORTED")
        public static let resourceExhausted = Code("RESOURCE_EXHAUSTED")
        public static let cancelled = Code("CANCELLED")
        public static let `internal` = Code("INTERNAL")
        public static let unimplemented = Code("UNIMPLEMENTED")
        public static let unavailable = Code("UNAVAILABLE")
        public static let deadlineExceeded = Code("DEADLINE_EXCEEDED")
        public static let unknown = Code("UNKNOWN")
        /// The token provider could not supply a token; ``FleetEngineClientError/tokenError`` says why.
        public static let tokenUnavailable = Code("token_unavailable")
        /// Fleet Engine could not be reached (connection refused, timeout, DNS).
        public static let unreachable = Code("unreachable")
        /// Fleet Engine answered something other than a JSON object.
        public static let invalidResponse = Code("invalid_response")

        /// Every known code.
        public static let all: [Code] = [
            .invalidArgument, .failedPrecondition, .outOfRange, .unauthenticated, .permissionDenied, .notFound,
            .alreadyExists, .aborted, .resourceExhausted, .cancelled, .internal, .unimplemented, .unavailable,
            .deadlineExceeded, .unknown, .tokenUnavailable, .unreachable, .invalidResponse,
        ]
    }

    public let code: Code
    /// Fleet Engine's message, or what went wrong on the client; never contains a token.
    public let message: String
    /// The HTTP status of the answer, when there was one.
    public let httpStatus: Int?
    /// The token provider's error, for ``Code/tokenUnavailable``.
    public let tokenError: FleetTokenError?

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, tokenError: FleetTokenError? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.tokenError = tokenError
    }

    /// Whether the same call may succeed later: Fleet Engine or the token endpoint unreachable or overloaded.
    public var isTransient: Bool {
        switch code {
        case .unavailable, .deadlineExceeded, .resourceExhausted, .aborted, .internal, .unreachable: true
        case .tokenUnavailable: tokenError?.isTransient ?? false
        default: false
        }
    }

    public var description: String {
        httpStatus.map { "\(code.rawValue) (\($0)): \(message)" } ?? "\(code.rawValue): \(message)"
    }

    /// The code for an HTTP status without a readable `status` in the body (Google's HTTP mapping).
    static func code(httpStatus: Int) -> Code {
        switch httpStatus {
        case 400: .invalidArgument
        case 401: .unauthenticated
        case 403: .permissionDenied
        case 404: .notFound
        case 409: .aborted
        case 412: .failedPrecondition
        case 429: .resourceExhausted
        case 499: .cancelled
        case 501: .unimplemented
        case 502, 503: .unavailable
        case 504: .deadlineExceeded
        case 500..<600: .internal
        default: .unknown
        }
    }
}
