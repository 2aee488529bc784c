import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
import Hummingbird

/// The operators' API under `/v1/admin`: users, grants, key rotation and the audit log. Every call needs an
/// operator's session, except grant management, which a service account's API key may do too.
struct AdminRoutes {
    let login: LoginService
    let users: UserDirectory
    let keyring: Keyring
    let audit: any AuditLog
    let metrics: TokenServerMetrics
    let maximumBodySize: Int

    func register(on admin: RouterGroup<TokenServerRequestContext>) {
        // Who may call what is decided once per route group, before any handler runs.
        let group = admin.group().add(
            middleware: RoleRequirement(login: login, roles: [.operator]) { role in
                role == .service
                    ? "A service key may only grant and revoke; this needs an operator."
                    : "Only operators may use the admin API."
            }
        )
        let grants = admin.group().add(
            middleware: RoleRequirement(login: login, roles: [.operator, .service]) { _ in
                "Only operators and service accounts may manage grants."
            }
        )
        group.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.text))
            )
        }
        group.get("users") { request, _ in
            let identities = try await users.identities()
            let users = try await users.users().map { entry -> JSONValue in
                .object([
                    "username": .string(entry.user.username), "role": .string(entry.user.role.rawValue),
                    "grants": .array(
                        entry.grants.map { .object(["kind": .string($0.kind.rawValue), "id": .string($0.id)]) }
                    ),
                    "identities": .array((identities[entry.user.username] ?? []).map { .object(Self.json($0)) }),
                ])
            }
            return JSONResponse.make(["users": .array(users)])
        }
        group.post("users") { request, _ in
            let body = try await readBody(request, "user")
            let username = try JSONRequestBody.string(body, "username")
            let role = try Self.role(try JSONRequestBody.string(body, "role"))
            var answer: JSONObject = ["username": .string(username), "role": .string(role.rawValue)]
            if body["subject"] != nil {
                // A user who logs in with an OpenID Provider's ID tokens: no password.
                guard body["password"] == nil else {
                    throw GoogleAPIError.invalidArgument(
                        "Give a password or a subject (an OpenID identity), not both."
                    )
                }
                let identity = try Self.identity(body)
                try await users.addUser(AppUser(username: username, role: role), identity: identity)
                answer["identities"] = .array([.object(Self.json(identity))])
            } else {
                try await users.addUser(
                    AppUser(username: username, role: role),
                    password: try JSONRequestBody.string(body, "password")
                )
            }
            return JSONResponse.make(answer, status: .created)
        }
        group.post("users/{username}/identities") { request, context in
            let identity = try Self.identity(try await readBody(request, "identity"))
            try await users.link(identity, to: context.parameters.get("username") ?? "")
            return JSONResponse.make(Self.json(identity), status: .created)
        }
        group.delete("users/{username}") { request, context in
            let username = context.parameters.get("username") ?? ""
            guard username != context.appUser?.username else {
                throw GoogleAPIError.invalidArgument("Operators cannot delete their own account.")
            }
            try await users.removeUser(username)
            return Response(status: .noContent, headers: [.cacheControl: "no-store"])
        }
        grants.post("users/{username}/grants") { request, context in
            let body = try await readBody(request, "grant")
            let grant = try Self.grant(
                kind: try JSONRequestBody.string(body, "kind"),
                id: try JSONRequestBody.string(body, "id")
            )
            try await users.grant(grant, to: context.parameters.get("username") ?? "")
            return JSONResponse.make(["kind": .string(grant.kind.rawValue), "id": .string(grant.id)], status: .created)
        }
        grants.delete("users/{username}/grants/{kind}/{id}") { request, context in
            let grant = try Self.grant(
                kind: context.parameters.get("kind") ?? "",
                id: (context.parameters.get("id") ?? "").removingPercentEncoding ?? ""
            )
            try await users.revoke(grant, from: context.parameters.get("username") ?? "")
            return Response(status: .noContent, headers: [.cacheControl: "no-store"])
        }
        group.post("keys/{family}/rotate") { request, context in
            guard let family = TokenFamily(rawValue: context.parameters.get("family") ?? "") else {
                throw GoogleAPIError.notFound(
                    "Unknown token family; one of \(TokenFamily.allCases.map(\.rawValue).joined(separator: ", "))."
                )
            }
            let record = try await keyring.rotate(family)
            let email = try keyring.signingKey(for: family).email
            return JSONResponse.make([
                "family": .string(family.rawValue), "kid": .string(record.kid), "email": .string(email),
            ])
        }
        group.get("audit") { request, _ in
            let limit = request.uri.queryParameters.get("limit").flatMap { Int($0) } ?? 100
            guard (1...10_000).contains(limit) else {
                throw GoogleAPIError.invalidArgument("limit must be between 1 and 10000.")
            }
            let entries = try await audit.recentEntries(limit: limit).map { entry -> JSONValue in
                .object([
                    "issuedAt": .integer(entry.issuedAt.epochSeconds * 1000), "username": .string(entry.username),
                    "tokenType": .string(entry.endpoint.name), "scope": .string(entry.scope),
                    "kid": .string(entry.kid), "expiresAt": .integer(entry.expiresAt.epochSeconds * 1000),
                ])
            }
            return JSONResponse.make(["entries": .array(entries)])
        }
    }

    func readBody(_ request: Request, _ field: String) async throws(GoogleAPIError) -> JSONObject {
        try await JSONRequestBody.read(request, limit: maximumBodySize, field: field)
    }

    /// `{"subject", "issuer"?}` of a request body.
    static func identity(_ body: JSONObject) throws(GoogleAPIError) -> ExternalIdentity {
        let subject = try JSONRequestBody.string(body, "subject")
        let issuer = body["issuer"] == nil ? "" : try JSONRequestBody.string(body, "issuer")
        return ExternalIdentity(issuer: issuer, subject: subject)
    }

    static func json(_ identity: ExternalIdentity) -> JSONObject {
        var object: JSONObject = ["subject": .string(identity.subject)]
        if !identity.issuer.isEmpty { object["issuer"] = .string(identity.issuer) }
        return object
    }

    static func role(_ name: String) throws(GoogleAPIError) -> AppUserRole {
        guard let role = AppUserRole(rawValue: name) else {
            throw .invalidArgument("role must be one of \(AppUserRole.names).")
        }
        return role
    }

    static func grant(kind: String, id: String) throws(GoogleAPIError) -> Grant {
        guard let grantKind = GrantKind(rawValue: kind) else {
            throw .invalidArgument("kind must be one of \(GrantKind.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        guard id != FleetEngineID.wildcard, FleetEngineID.isValid(id) else {
            throw .invalidArgument("id must be 1–64 characters, NFC, without / : ? , # and not \"*\".")
        }
        return Grant(kind: grantKind, id: id)
    }
}

/// Lets a request through only with a session (or API key) of one of `roles`, and puts its user in the context:
/// 401 without a valid one, 403 with another role.
struct RoleRequirement: RouterMiddleware {
    typealias Context = TokenServerRequestContext

    let login: LoginService
    let roles: Set<AppUserRole>
    /// The 403 message for a user of another role.
    let refusal: @Sendable (AppUserRole) -> String

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let user = try await login.user(sessionToken: TokenServerRoutes.bearer(request))
        guard roles.contains(user.role) else { throw GoogleAPIError.permissionDenied(refusal(user.role)) }
        var context = context
        context.appUser = user
        return try await next(request, context)
    }
}
