public import AsyncHTTPClient
public import FleetAuthCore
import FleetAuthJWT
import Foundation
import NIOHTTP1

/// OAuth 2.0 access tokens for Google's APIs from one set of credentials: cached until 5 minutes before they
/// expire, fetched once however many callers wait, and dropped when an API refuses them
/// (``AccessTokenCache`` holds the rules).
///
/// | credentials | request |
/// |---|---|
/// | service-account key | `POST token_uri` `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>` (RFC 7523), the JWT signed with the key, `scope` cloud-platform |
/// | authorized user | `POST token_uri` `grant_type=refresh_token&client_id&client_secret&refresh_token` |
/// | impersonated | the source credentials' token, then `POST service_account_impersonation_url` `{"scope","delegates","lifetime"}` |
/// | metadata server | `GET http://HOST/computeMetadata/v1/instance/service-accounts/default/token` with `Metadata-Flavor: Google` |
public actor AccessTokenSource {
    /// Where tokens come from.
    public nonisolated let credentials: GoogleCredentials
    private let http: GoogleHTTP
    private let clock: any WallClock
    private let timeout: Duration
    private var cache = AccessTokenCache()
    private var waiters: [CheckedContinuation<String, any Error>] = []
    private let source: AccessTokenSource?

    /// - Parameters:
    ///   - credentials: the credentials, usually ``GoogleCredentials/applicationDefault(environment:)``.
    ///   - client: the pooled HTTP client (``HTTPClient/shared`` by default).
    ///   - timeout: the deadline of one token request.
    ///   - clock: the clock token expiry is measured on.
    public init(
        credentials: GoogleCredentials,
        client: HTTPClient = .shared,
        timeout: Duration = .seconds(5),
        clock: any WallClock = .system
    ) {
        self.credentials = credentials
        self.http = GoogleHTTP(client: client)
        self.clock = clock
        self.timeout = timeout
        if case .impersonated(let source, _, _) = credentials {
            self.source = AccessTokenSource(credentials: source, client: client, timeout: timeout, clock: clock)
        } else {
            self.source = nil
        }
    }

    /// A usable access token: the cached one, or a new one.
    public func token() async throws -> String {
        switch cache.request(now: clock.currentDate.timeIntervalSince1970) {
        case .use(let token):
            return token
        case .wait:
            return try await withCheckedThrowingContinuation { waiters.append($0) }
        case .startFetch:
            do {
                let token = try await fetch()
                cache.fetched(token)
                let waiting = waiters
                waiters = []
                waiting.forEach { $0.resume(returning: token.value) }
                return token.value
            } catch {
                cache.failed()
                let waiting = waiters
                waiters = []
                waiting.forEach { $0.resume(throwing: error) }
                throw error
            }
        }
    }

    /// Forgets `token` after an API refused it (401), so the next ``token()`` fetches a new one.
    public func refused(_ token: String) {
        cache.refused(token)
    }

    private func fetch() async throws -> AccessTokenCache.Token {
        let now = clock.currentDate.timeIntervalSince1970
        switch credentials {
        case .serviceAccount(let key):
            let tokenURI = key.tokenURI ?? GoogleCredentials.googleTokenURI
            let issuedAt = Int64(now.rounded(.down))
            var claims = JSONObject()
            claims["iss"] = .string(key.clientEmail)
            claims["scope"] = .string(GoogleCredentials.cloudPlatformScope)
            claims["aud"] = .string(tokenURI)
            claims["iat"] = .integer(issuedAt)
            claims["exp"] = .integer(issuedAt + 3600)
            let assertion = try await LocalKeySigner(key: key).signToken(payload: claims.jsonBytes)
            return try await oauthGrant(
                tokenURI,
                [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)],
                now: now,
                what: "The OAuth token endpoint \(tokenURI) (for \(key.clientEmail))"
            )
        case .authorizedUser(let clientID, let clientSecret, let refreshToken, let tokenURI):
            return try await oauthGrant(
                tokenURI,
                [
                    ("grant_type", "refresh_token"), ("client_id", clientID), ("client_secret", clientSecret),
                    ("refresh_token", refreshToken),
                ],
                now: now,
                what: "The OAuth token endpoint \(tokenURI) (for a user's refresh token)"
            )
        case .impersonated(_, let url, let delegates):
            let sourceToken = try await source!.token()
            var body = JSONObject()
            body["scope"] = .array([.string(GoogleCredentials.cloudPlatformScope)])
            body["delegates"] = .array(delegates.map { .string($0) })
            body["lifetime"] = "3600s"
            let what = "IAM generateAccessToken (\(url))"
            let answer = try await http.send(
                .POST,
                url,
                headers: [("Authorization", "Bearer \(sourceToken)"), ("Content-Type", "application/json")],
                body: body.jsonBytes,
                timeout: timeout,
                what: what
            )
            if answer.status == 401 { await source!.refused(sourceToken) }
            try Self.check(answer, what: what)
            guard let object = answer.object, let token = object["accessToken"]?.stringValue,
                let expireTime = object["expireTime"]?.stringValue.flatMap(RFC3339.parse)
            else {
                throw SigningError.invalidResponse("\(what) answered without accessToken and expireTime.")
            }
            return .init(value: token, expiresAt: expireTime.timeIntervalSince1970)
        case .metadataServer(let host):
            let url = "http://\(host)/computeMetadata/v1/instance/service-accounts/default/token"
            let what = "The metadata server (\(url))"
            let answer = try await http.send(
                .GET,
                url,
                headers: [("Metadata-Flavor", "Google")],
                timeout: timeout,
                what: what
            )
            try Self.check(answer, what: what)
            return try Self.oauthToken(answer, now: now, what: what)
        }
    }

    private func oauthGrant(_ url: String, _ fields: [(String, String)], now: Double, what: String) async throws
        -> AccessTokenCache.Token
    {
        let answer = try await http.send(
            .POST,
            url,
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: GoogleHTTP.form(fields),
            timeout: timeout,
            what: what
        )
        try Self.check(answer, what: what)
        return try Self.oauthToken(answer, now: now, what: what)
    }

    private static func check(_ answer: GoogleHTTP.Answer, what: String) throws(SigningError) {
        switch answer.status {
        case 200..<300: return
        case 429, 500...: throw .unavailable("\(what) answered \(answer.status): \(answer.errorMessage)")
        default: throw .unauthenticated("\(what) refused the credentials (\(answer.status)): \(answer.errorMessage)")
        }
    }

    /// `{"access_token", "expires_in", "token_type"}`.
    private static func oauthToken(_ answer: GoogleHTTP.Answer, now: Double, what: String) throws(SigningError)
        -> AccessTokenCache.Token
    {
        guard let object = answer.object, let token = object["access_token"]?.stringValue, !token.isEmpty,
            let expiresIn = object["expires_in"]?.numberValue, expiresIn > 0
        else {
            throw .invalidResponse("\(what) answered without access_token and expires_in.")
        }
        return .init(value: token, expiresAt: now + expiresIn)
    }
}
