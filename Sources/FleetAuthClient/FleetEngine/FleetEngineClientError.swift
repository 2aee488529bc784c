/// A failed Fleet Engine call: Google's error body (`{"error":{"code","message","status"}}`) as a typed error, or
/// what kept the call from being answered (no token, no connection, an unreadable answer).
///
/// Equality compares the code only.
public struct FleetEngineClientError: Error, Hashable, CustomStringConvertible {
    /// Google's canonical status names for answers from Fleet Engine, and three client-side codes.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidArgument = "INVALID_ARGUMENT"
        case failedPrecondition = "FAILED_PRECONDITION"
        case outOfRange = "OUT_OF_RANGE"
        /// 401: the token was refused, also after one retry with a fresh token.
        case unauthenticated = "UNAUTHENTICATED"
        /// 403: the token is valid but does not allow this call. Never retried.
        case permissionDenied = "PERMISSION_DENIED"
        case notFound = "NOT_FOUND"
        case alreadyExists = "ALREADY_EXISTS"
        case aborted = "ABORTED"
        case resourceExhausted = "RESOURCE_EXHAUSTED"
        case cancelled = "CANCELLED"
        case `internal` = "INTERNAL"
        case unimplemented = "UNIMPLEMENTED"
        case unavailable = "UNAVAILABLE"
        case deadlineExceeded = "DEADLINE_EXCEEDED"
        case unknown = "UNKNOWN"
        /// The token provider could not supply a token; ``FleetEngineClientError/tokenError`` says why.
        case tokenUnavailable = "token_unavailable"
        /// Fleet Engine could not be reached (connection refused, timeout, DNS).
        case unreachable = "unreachable"
        /// Fleet Engine answered something other than a JSON object.
        case invalidResponse = "invalid_response"
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

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

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
