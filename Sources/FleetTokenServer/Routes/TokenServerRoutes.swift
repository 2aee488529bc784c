import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
public import Hummingbird
import Logging

/// The request context: the client's address (for login throttling).
public struct TokenServerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address, if known.
    public let remoteAddress: String?
    /// The user whose session (or API key) the route group's role check accepted; nil on routes without one.
    public internal(set) var appUser: AppUser?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }
}

/// The token server's HTTP API: sessions, token endpoints, public keys and the operators' admin API.
struct TokenServerRoutes {
    let login: LoginService
    let users: UserDirectory
    let keyring: Keyring
    let audit: any AuditLog
    let mintLimiter: MintRateLimiter
    let metrics: TokenServerMetrics
    let clock: any WallClock
    let auditLogger: Logger
    let logger: Logger
    let maximumBodySize: Int
    let trustedProxies: TrustedProxies

    func register(on router: Router<TokenServerRequestContext>) {
        router.post("v1/sessions", use: createSession)
        router.delete("v1/sessions/current", use: deleteSession)
        for endpoint in TokenServerEndpoint.all {
            if endpoint.grantKind != nil {
                router.get("token/\(endpoint.name)/{id}") { request, context in
                    try await self.token(endpoint, id: context.parameters.get("id"), request)
                }
                router.get("token/\(endpoint.name)") { _, _ -> Response in
                    throw GoogleAPIError.invalidArgument("GET /token/\(endpoint.name)/{id} needs an ID.")
                }
            } else {
                router.get("token/\(endpoint.name)") { request, _ in try await self.token(endpoint, id: nil, request) }
            }
        }
        router.get("service_accounts/v1/metadata/jwk/{email}", use: publicKeys)
        AdminRoutes(
            login: login,
            users: users,
            keyring: keyring,
            audit: audit,
            metrics: metrics,
            maximumBodySize: maximumBodySize
        ).register(on: router.group("v1/admin"))
    }

    // MARK: Sessions

    func createSession(_ request: Request, _ context: TokenServerRequestContext) async throws -> Response {
        // Only JSON: a plain HTML form on another site (which a browser posts cross-origin without asking) cannot
        // spend a user's failed logins.
        guard Self.isJSON(request.headers[.contentType]) else {
            throw GoogleAPIError(.unsupportedMediaType, "A login is a JSON body: \"Content-Type: application/json\".")
        }
        let body = try await JSONRequestBody.read(request, limit: maximumBodySize, field: "session")
        // The client the throttle counts: behind a trusted proxy, the one it forwards for.
        let address = trustedProxies.client(peer: context.remoteAddress, headers: request.headers)
        let session: Session
        if body["idToken"] != nil {
            guard body["username"] == nil, body["password"] == nil else {
                throw GoogleAPIError.invalidArgument(
                    "Log in with an idToken or with a username and password, not both."
                )
            }
            let idToken = try JSONRequestBody.string(body, "idToken")
            session = try await login.login(idToken: idToken, address: address)
        } else {
            let username = try JSONRequestBody.string(body, "username")
            let password = try JSONRequestBody.string(body, "password")
            // The device token of an earlier login: in the body (apps) or the cookie this answer sets (browsers).
            let device =
                body["deviceToken"] == nil
                ? Self.cookie(Self.deviceCookie, in: request.headers[.cookie])
                : try JSONRequestBody.string(body, "deviceToken")
            session = try await login.login(
                username: username,
                password: password,
                address: address,
                deviceToken: device
            )
        }
        var response = JSONResponse.make(session.jsonObject, status: .created)
        if let device = session.deviceToken {
            // Only ever sent back to this path, over HTTPS (browsers count loopback as secure); never readable by a
            // page's scripts.
            let maxAge = Int(LoginService.deviceTokenLifetime.components.seconds)
            response.headers[.setCookie] =
                "\(Self.deviceCookie)=\(device); Path=/v1/sessions; Max-Age=\(maxAge); HttpOnly; Secure; SameSite=Strict"
        }
        return response
    }

    func deleteSession(_ request: Request, _ context: TokenServerRequestContext) async throws -> Response {
        let token = Self.bearer(request)
        _ = try await login.user(sessionToken: token)
        try await login.logout(sessionToken: token ?? "")
        return Response(status: .noContent, headers: [.cacheControl: "no-store"])
    }

    /// The cookie that carries a browser's device token (``LoginService``).
    static let deviceCookie = "fleetauth_device"

    /// The value of cookie `name` in a `Cookie` header, or nil.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// Whether a Content-Type is `application/json`, with or without parameters (`; charset=utf-8`).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    static func bearer(_ request: Request) -> String? {
        RequestText.bearerCredential(request.headers[.authorization])
    }

    // MARK: Tokens

    /// Mints `endpoint`'s token for `id` if the session's user may have it; audits it.
    func token(_ endpoint: TokenServerEndpoint, id rawID: String?, _ request: Request) async throws -> Response {
        let id = rawID.map { RequestText.percentDecoded($0) ?? $0 }
        // A malformed ID is the caller's mistake (400) whoever asks; answering it as a bad session (401) would sign
        // a web page's user out for a typo in a link.
        if let kind = endpoint.grantKind {
            guard let id, id != FleetEngineID.wildcard, FleetEngineID.isValid(id) else {
                throw GoogleAPIError.invalidArgument(
                    "The \(kind) ID must be 1–64 characters, NFC, without / : ? , # and not \"*\"."
                )
            }
        }
        let grant = endpoint.grantKind.flatMap { kind in id.map { Grant(kind: kind, id: $0) } }
        let (user, granted) = try await login.user(sessionToken: Self.bearer(request), holding: grant)
        if let kind = endpoint.grantKind {
            // The same answer whether or not the resource exists anywhere.
            guard user.role == .operator || granted else {
                metrics.refused(endpoint, .notGranted)
                throw GoogleAPIError.permissionDenied("This user is not granted that \(kind).")
            }
        } else if user.role != .operator {
            metrics.refused(endpoint, .notGranted)
            throw GoogleAPIError.permissionDenied("Only operators may get \(endpoint.name) tokens.")
        }
        let type = try endpoint.tokenType(id: id ?? "")
        let issuedAt = clock.currentDate
        do {
            try mintLimiter.acquire(username: user.username, resource: endpoint.name + "/" + (id ?? ""))
        } catch {
            metrics.refused(endpoint, .rateLimited)
            throw error
        }
        try await keyring.refreshIfStale()
        let (minter, key) = try keyring.minter(for: endpoint.family)
        let token: FleetEngineToken
        do {
            token = try await ServerTracing.span("mint and sign") { try await minter.mint(type, now: issuedAt) }
            keyring.noteSigning(endpoint.family, failure: nil)
        } catch let error as SigningError {
            // Upstream text (IAM's error message) may quote a token: none reaches the log or /readyz.
            let message = SecretRedaction.redacted(error.message)
            keyring.noteSigning(endpoint.family, failure: message)
            // Never a 200 with a bad token: the signer refused, failed or answered something else.
            logger.error(
                "cannot sign a token",
                metadata: .fleetauth([
                    "family": .string(endpoint.family.rawValue), "account": .string(key.email),
                    "code": .string(error.code.rawValue), "error": .string(message),
                ])
            )
            metrics.refused(endpoint, .signerFailed)
            throw GoogleAPIError.unavailable(
                error.code == .permissionDenied
                    ? "The token server may not sign \(endpoint.family) tokens right now; its operator has been told why."
                    : "The token server cannot sign \(endpoint.family) tokens right now; try again shortly."
            )
        }
        let scope = JSONValue.object(type.authorization.jsonObject).jsonText
        try await ServerTracing.span("audit write") {
            try await audit.append(
                AuditEntry(
                    issuedAt: Date(epochSeconds: token.claims.issuedAt),
                    username: user.username,
                    endpoint: endpoint,
                    scope: scope,
                    kid: token.keyID ?? key.record.kid,
                    expiresAt: Date(epochSeconds: token.claims.expiresAt)
                )
            )
        }
        metrics.issued(endpoint)
        auditLogger.info(
            "issued token",
            metadata: .fleetauth([
                "user": .string(user.username), "endpoint": .string(endpoint.name), "scope": .string(scope),
                "kid": .string(token.keyID ?? key.record.kid), "exp": .stringConvertible(token.claims.expiresAt),
            ])
        )
        var object = token.endpointResponse(now: issuedAt.epochSeconds).jsonObject
        if endpoint.addsDeliveryKeys {
            object["creation_timestamp_ms"] = .integer(token.claims.issuedAt * 1000)
            object["expiration_timestamp_ms"] = .integer(token.claims.expiresAt * 1000)
        }
        return JSONResponse.make(object)
    }

    // MARK: Public keys

    func publicKeys(_ request: Request, _ context: TokenServerRequestContext) async throws -> Response {
        let email = context.parameters.get("email") ?? ""
        try await keyring.refreshIfStale()
        guard let keys = keyring.publishedKeys(email: email) else {
            throw GoogleAPIError.notFound("No service account \(email.prefix(200)) is served here.")
        }
        return JSONResponse.make(JSONWebKeySet(keys).jsonObject, headers: [.cacheControl: "public, max-age=60"])
    }
}
