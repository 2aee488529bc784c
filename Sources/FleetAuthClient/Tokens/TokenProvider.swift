public import FleetAuthCore

/// Hands out Fleet Engine JWTs for authorization contexts: what the Driver and Consumer SDKs ask for before
/// every call.
public protocol FleetTokenProvider: Sendable {
    /// A token for `context` with at least the provider's minimum lifetime left.
    func token(for context: AuthorizationContext) async throws -> String

    /// Reports that Fleet Engine rejected `token` (401): the next call fetches a new one. Tokens other than the
    /// cached one are ignored, so a storm of 401s on one token causes one refresh.
    func invalidate(_ token: String, for context: AuthorizationContext)
}

/// A token as a fetcher delivers it.
public struct FetchedToken: Sendable, Hashable {
    /// The JWT.
    public var jwt: String
    /// How long the token lives from the moment it was issued, as the server states it (`expiresInSeconds`, or
    /// an absolute expiry less the issue time, both in the server's clock); `nil` to rely on the JWT alone.
    public var statedLifetime: Duration?

    public init(jwt: String, statedLifetime: Duration? = nil) {
        self.jwt = jwt
        self.statedLifetime = statedLifetime
    }
}

/// Fetches a new token from the app's backend. ``TokenEndpointFetcher`` is the URLSession implementation.
public protocol TokenFetcher: Sendable {
    /// A new token for `context`. Throw ``FleetTokenError`` to say whether a failure is transient.
    func fetchToken(for context: AuthorizationContext) async throws -> FetchedToken
}

/// An error of the token provider, with a stable short code and whether retrying later may help.
public struct FleetTokenError: CodedError {
    /// What went wrong, as a stable short code safe for logs and metric labels (`endpoint_unavailable`).
    ///
    /// | code | meaning | transient |
    /// |---|---|---|
    /// | `missing_context` | the call named no context (the completion-handler entry point with `nil`) | no |
    /// | `endpoint_unavailable` | the token endpoint could not be reached, timed out, or answered 429 or 5xx | yes |
    /// | `endpoint_rejected` | the token endpoint refused the request (4xx other than 429) | no |
    /// | `malformed_token` | the endpoint's answer held no usable JWT | no |
    /// | `lifetime_too_short` | the token arrived with less than the minimum lifetime left | no |
    /// | `rejected_token_returned` | the endpoint answered a refresh with the token Fleet Engine had rejected | no |
    /// | `cancelled` | the caller was cancelled while waiting, or the provider was reset | no |
    ///
    /// Codes are static members, so new ones can be added without breaking callers.
    public struct Code: ErrorCode {
        /// The short code, such as `endpoint_unavailable`.
        public let rawValue: String

        private init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// The call named no context.
        public static let missingContext = Code("missing_context")
        /// The token endpoint could not be reached, timed out, or answered 429 or 5xx (transient).
        public static let endpointUnavailable = Code("endpoint_unavailable")
        /// The token endpoint refused the request (4xx other than 429): not retried until asked again.
        public static let endpointRejected = Code("endpoint_rejected")
        /// The endpoint's answer held no usable JWT.
        public static let malformedToken = Code("malformed_token")
        /// The token arrived with less than the minimum lifetime left.
        public static let lifetimeTooShort = Code("lifetime_too_short")
        /// The endpoint answered a refresh with the very token Fleet Engine had rejected.
        public static let rejectedTokenReturned = Code("rejected_token_returned")
        /// The caller was cancelled while waiting.
        public static let cancelled = Code("cancelled")
    }

    public let code: Code
    /// What happened, for logs; never contains a token.
    public let message: String
    /// The HTTP status of the endpoint's answer, when there was one.
    public let httpStatus: Int?

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    /// Whether trying again later may succeed.
    public var isTransient: Bool { code == .endpointUnavailable }

    public var description: String { "\(code.rawValue): \(message)" }

}

/// What the caching provider reports, for logs and metrics.
public enum TokenProviderEvent: Sendable, Hashable {
    /// A fetch began; `background` when the current token is still being served.
    case fetchStarted(AuthorizationContext, background: Bool)
    /// A fetch delivered a token with this lifetime.
    case fetchSucceeded(AuthorizationContext, lifetime: Duration)
    /// A fetch failed.
    case fetchFailed(AuthorizationContext, FleetTokenError)
    /// A call was answered from the cache.
    case cacheHit(AuthorizationContext)
    /// A call joined a fetch already in flight.
    case coalesced(AuthorizationContext)
    /// The cached token was dropped after Fleet Engine rejected it.
    case invalidated(AuthorizationContext)
}
