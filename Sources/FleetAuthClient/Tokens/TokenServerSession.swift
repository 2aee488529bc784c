public import FleetAuthCore
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// An app user's session with a FleetAuth token server (`fleetauth token-server` / `serve`): the login screen's
/// `POST /v1/sessions`, fetchers for the token endpoints carrying the session, and logout.
///
/// ```swift
/// let session = try await TokenServerSession.logIn(
///     baseURL: URL(string: "https://backend.example.com")!, username: "dana", password: password)
/// let provider = CachingTokenProvider(fetcher: session.fetcher(.driver))
/// ```
///
/// The session token is a bearer secret: keep it in the Keychain, never in logs.
public struct TokenServerSession: Sendable {
    public let baseURL: URL
    public let username: String
    /// What the user is to the token server; `nil` for a role this version of the client does not know.
    public let role: AppUserRole?
    /// When the server ends the session.
    public let expiresAt: Date
    /// The opaque session token sent as `Authorization: Bearer`.
    public let sessionToken: String
    /// The device token a password login answers: keep it (in the Keychain, like the session) and pass it to the
    /// next ``logIn(baseURL:username:password:deviceToken:session:)`` for this user, so that a lockout of the
    /// network's address (someone else guessing passwords behind the same NAT) does not refuse this user's right
    /// password. Nil for an ID-token login, or a server that issues none.
    public let deviceToken: String?
    private let session: URLSession

    /// Logs in. A wrong username or password is ``FleetTokenError/Code/endpointRejected`` with status 401; too many
    /// failures are status 429 (transient: try again after the server's `Retry-After`). `deviceToken`: the
    /// ``deviceToken`` of this user's last login on this device, if the app kept it.
    public static func logIn(
        baseURL: URL,
        username: String,
        password: String,
        deviceToken: String? = nil,
        session: URLSession = URLSession(configuration: .ephemeral)
    ) async throws(FleetTokenError) -> Self {
        var body: JSONObject = ["username": .string(username), "password": .string(password)]
        if let deviceToken { body["deviceToken"] = .string(deviceToken) }
        return try await logIn(baseURL: baseURL, body: body, username: username, session: session)
    }

    /// Logs in with an ID token from the app's OpenID Provider — Firebase Authentication, Sign in with Apple,
    /// Google Sign-In, Auth0, Keycloak… — that the token server is configured to trust (`--oidc-issuer`), for the
    /// user its identity is linked to. A token the server does not accept is ``FleetTokenError/Code/endpointRejected``
    /// with status 401, exactly like a wrong password.
    ///
    /// ```swift
    /// let idToken = try await Auth.auth().currentUser!.getIDToken()   // Firebase; or your provider's SDK
    /// let session = try await TokenServerSession.logIn(baseURL: backend, idToken: idToken)
    /// ```
    public static func logIn(
        baseURL: URL,
        idToken: String,
        session: URLSession = URLSession(configuration: .ephemeral)
    ) async throws(FleetTokenError) -> Self {
        try await logIn(baseURL: baseURL, body: ["idToken": .string(idToken)], username: "", session: session)
    }

    private static func logIn(
        baseURL: URL,
        body requestBody: JSONObject,
        username: String,
        session: URLSession
    ) async throws(FleetTokenError) -> Self {
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/sessions"), timeoutInterval: 15)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(requestBody.jsonBytes)
        let (body, status) = try await send(request, session: session)
        guard status == 201 else { throw TokenEndpointFetcher.error(status: status, what: "The login") }
        guard let object = try? StrictJSONParser().parseObject(Array(body)),
            let token = object["sessionToken"]?.stringValue, !token.isEmpty
        else { throw FleetTokenError(.malformedToken, "The login answer has no sessionToken.", httpStatus: status) }
        return Self(
            baseURL: baseURL,
            username: object["username"]?.stringValue ?? username,
            role: object["role"]?.stringValue.flatMap(AppUserRole.init(rawValue:)),
            expiresAt: Date(timeIntervalSince1970: (object["expiresAt"]?.numberValue ?? 0) / 1000),
            sessionToken: token,
            deviceToken: object["deviceToken"]?.stringValue,
            session: session
        )
    }

    /// A fetcher for `endpoint` (such as `TokenServerEndpoint.driver`) that sends this session.
    public func fetcher(_ endpoint: TokenServerEndpoint) -> TokenEndpointFetcher {
        let token = sessionToken
        let base =
            baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        return TokenEndpointFetcher(
            urlTemplate: base + endpoint.pathTemplate,
            headers: { ["Authorization": "Bearer \(token)"] },
            session: session
        )
    }

    /// Ends the session on the server (`DELETE /v1/sessions/current`). Drop the app's token provider too.
    public func logOut() async throws(FleetTokenError) {
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/sessions/current"), timeoutInterval: 15)
        request.httpMethod = "DELETE"
        request.setValue("Bearer \(sessionToken)", forHTTPHeaderField: "Authorization")
        let (_, status) = try await Self.send(request, session: session)
        guard (200..<300).contains(status) else { throw TokenEndpointFetcher.error(status: status, what: "The logout") }
    }

    private static func send(_ request: URLRequest, session: URLSession) async throws(FleetTokenError) -> (Data, Int) {
        var request = request
        TracePropagation.inject(into: &request)
        do {
            let (body, response) = try await session.cancellationSafeData(for: request)
            guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            return (body, http.statusCode)
        } catch {
            throw FleetTokenError(.endpointUnavailable, "The token server could not be reached: \(error).")
        }
    }
}
