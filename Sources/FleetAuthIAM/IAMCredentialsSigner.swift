public import AsyncHTTPClient
public import FleetAuthCore
public import FleetAuthJWT
import Foundation
import NIOHTTP1

/// Signs tokens through Google's IAM Service Account Credentials API, so the private key never leaves Google:
/// `POST {base}/v1/projects/-/serviceAccounts/{email}:signJwt` with `{"payload": "<claims JSON>"}`, answered with
/// `{"keyId", "signedJwt"}` — a whole JWT with Google's RS256 header and `kid`
/// (<https://cloud.google.com/iam/docs/reference/credentials/rest/v1/projects.serviceAccounts/signJwt>).
///
/// The caller authenticates with an access token from ``AccessTokenSource`` (Application Default Credentials: on
/// Cloud Run and GKE, the metadata server). That identity needs `iam.serviceAccounts.signJwt` on the signing
/// account: the role `roles/iam.serviceAccountTokenCreator` granted on that service account.
///
/// Failures, each a ``SigningError``:
/// - 403: `permission_denied`, naming the permission and the role to grant; not retried.
/// - 401: the access token is dropped and the call is tried once more with a new one.
/// - 429, 5xx, no answer within ``Configuration/attemptTimeout``: retried after a jittered backoff, at most
///   ``Configuration/maximumAttempts`` tries in all, then `unavailable`.
/// - an answer without `signedJwt`, or whose `keyId` is not the token's `kid`: `invalid_response`.
///
/// ``FleetEngineTokenMinter`` then checks that the token carries exactly the claims it sent.
public struct IAMCredentialsSigner: TokenSigner {
    /// How the signer reaches IAM.
    public struct Configuration: Sendable, Hashable {
        /// The API's base URL; `https://iamcredentials.googleapis.com` by default.
        public var baseURL: String
        /// The deadline of one try.
        public var attemptTimeout: Duration
        /// Tries in all for 429, 5xx and timeouts (1 to 10).
        public var maximumAttempts: Int
        /// The backoff before the second try; each later try waits up to twice as long, and every wait is drawn
        /// at random between half and all of it.
        ///
        /// | try | wait before it |
        /// |---|---|
        /// | 2 | 0.5–1 × `initialBackoff` |
        /// | 3 | 1–2 × `initialBackoff` |
        public var initialBackoff: Duration

        /// Google's endpoint.
        public static let googleBaseURL = "https://iamcredentials.googleapis.com"

        public init(
            baseURL: String = Configuration.googleBaseURL,
            attemptTimeout: Duration = .seconds(4),
            maximumAttempts: Int = 3,
            initialBackoff: Duration = .milliseconds(200)
        ) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.attemptTimeout = attemptTimeout
            self.maximumAttempts = min(max(maximumAttempts, 1), 10)
            self.initialBackoff = initialBackoff
        }
    }

    public let serviceAccountEmail: String
    public let configuration: Configuration
    /// The caller's access tokens.
    public let accessTokens: AccessTokenSource
    private let http: GoogleHTTP
    private let clock: any WallClock

    /// A signer for `serviceAccountEmail`, authenticated by `accessTokens`, over `client`'s pooled connections.
    ///
    /// - Parameter clock: the clock each try's deadline and the backoffs between tries are measured on (the
    ///   HTTP client's own deadline, on the system's clock, stays as a guard).
    public init(
        serviceAccountEmail: String,
        accessTokens: AccessTokenSource,
        configuration: Configuration = Configuration(),
        client: HTTPClient = .shared,
        clock: any WallClock = .system
    ) {
        self.serviceAccountEmail = serviceAccountEmail
        self.accessTokens = accessTokens
        self.configuration = configuration
        self.http = GoogleHTTP(client: client)
        self.clock = clock
    }

    /// The `signJwt` URL for the account.
    public var signJwtURL: String {
        let email =
            serviceAccountEmail.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? serviceAccountEmail
        return "\(configuration.baseURL)/v1/projects/-/serviceAccounts/\(email):signJwt"
    }

    public func signToken(payload: [UInt8]) async throws -> String {
        var body = JSONObject()
        body["payload"] = .string(String(decoding: payload, as: UTF8.self))
        let bytes = body.jsonBytes
        let what = "IAM signJwt for \(serviceAccountEmail)"
        var attempt = 1
        var refreshedAfter401 = false
        while true {
            let failure: SigningError
            do {
                let token = try await accessTokens.token()
                let answer = try await withinAttemptTimeout(what: what) { [http, signJwtURL, configuration] in
                    try await http.send(
                        .POST,
                        signJwtURL,
                        headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                        body: bytes,
                        timeout: configuration.attemptTimeout,
                        what: what
                    )
                }
                switch answer.status {
                case 200:
                    return try Self.signedJwt(answer, what: what)
                case 401 where !refreshedAfter401:
                    await accessTokens.refused(token)
                    refreshedAfter401 = true
                    continue
                case 401:
                    throw SigningError.unauthenticated(
                        "\(what): IAM refused a freshly fetched access token (401): \(answer.errorMessage)"
                    )
                case 403:
                    throw SigningError.permissionDenied(
                        "\(what) was refused (403: \(answer.errorMessage)). The identity of "
                            + "\(accessTokens.credentials.summary) needs the permission iam.serviceAccounts.signJwt on "
                            + "\(serviceAccountEmail): grant it the role roles/iam.serviceAccountTokenCreator on that "
                            + "service account."
                    )
                case 404:
                    throw SigningError.configuration(
                        "\(what): IAM does not know the service account \(serviceAccountEmail) (404: \(answer.errorMessage))."
                    )
                case 429, 500...:
                    failure = .unavailable("\(what) answered \(answer.status): \(answer.errorMessage)")
                default:
                    throw SigningError.invalidResponse(
                        "\(what) answered \(answer.status): \(answer.errorMessage)"
                    )
                }
            } catch let error as SigningError where error.isTransient {
                failure = error
            }
            guard attempt < configuration.maximumAttempts else {
                throw SigningError.unavailable(
                    "\(failure.message) (after \(attempt) tr\(attempt == 1 ? "y" : "ies"))"
                )
            }
            let scale = Double(1 << (attempt - 1)) * Double.random(in: 0.5...1)
            try await clock.sleep(for: configuration.initialBackoff * scale)
            attempt += 1
        }
    }

    /// `send`'s answer, or `unavailable` once ``Configuration/attemptTimeout`` has passed on the signer's clock;
    /// the request is then cancelled.
    private func withinAttemptTimeout(
        what: String,
        _ send: @escaping @Sendable () async throws -> GoogleHTTP.Answer
    ) async throws -> GoogleHTTP.Answer {
        let timeout = configuration.attemptTimeout
        let clock = self.clock
        return try await withThrowingTaskGroup(of: GoogleHTTP.Answer?.self) { group in
            group.addTask { try await send() }
            group.addTask {
                try await clock.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let answer = first else {
                throw SigningError.unavailable("\(what) did not answer within \(timeout).")
            }
            return answer
        }
    }

    /// The `signedJwt` of a 200 answer, whose `kid` must be the answer's `keyId`.
    private static func signedJwt(_ answer: GoogleHTTP.Answer, what: String) throws(SigningError) -> String {
        guard let object = answer.object, let jwt = object["signedJwt"]?.stringValue, !jwt.isEmpty else {
            throw .invalidResponse("\(what) answered 200 without a signedJwt.")
        }
        if let keyID = object["keyId"]?.stringValue, let jws = try? CompactJWS(jwt), let kid = jws.keyID,
            kid != keyID
        {
            throw .invalidResponse("\(what) answered a token whose kid is not the keyId it named.")
        }
        return jwt
    }
}
