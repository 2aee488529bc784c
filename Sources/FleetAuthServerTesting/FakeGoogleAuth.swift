import FleetAuthCore
public import FleetAuthJWT
import Foundation
import HTTPTypes
public import Hummingbird
import NIOConcurrencyHelpers

/// Google's OAuth token endpoint, metadata server and IAM Credentials API, as far as FleetAuth's keyless signing
/// uses them, for tests that cannot reach Google: real HTTP (run ``router`` with Hummingbird on loopback), real RS256
/// signatures, and faults a test scripts — a 403, a 429, a 503, an answer held past the caller's deadline,
/// malformed JSON, a token whose claims differ from those sent, a metadata server that is down.
///
/// The working path is also served by the emulator (``LocalIAM`` in FleetEngineEmulator), which Google's own
/// `google-auth` checks in CI; this fake exists for the faults.
public final class FakeGoogleAuth: Sendable {
    /// How the next `signJwt` call is answered.
    public enum SignFault: Sendable, Equatable {
        /// An HTTP status with Google's error body.
        case status(Int)
        /// The right answer, held until ``releaseHeld()``: later than any deadline of the caller's, however fast or
        /// slow the machine (``heldRequests`` counts the calls held).
        case held
        /// `200` with a body that is not JSON.
        case malformed
        /// `200` with a token whose `exp` is an hour later than sent.
        case mismatchedClaims
        /// `200` without `signedJwt`.
        case missingToken
        /// `200` with the right claims and `kid`, signed by another key.
        case signedByAnotherKey
        /// `200` with the right claims and `kid`, and random bytes as the signature.
        case garbageSignature
        /// An HTTP status whose error message quotes the caller's `Authorization` header, as a hostile or broken
        /// endpoint might.
        case echoingCredentials(Int)
    }

    /// The service account whose key signs.
    public let key: ServiceAccountKey
    /// The refresh token an `authorized_user` file must present.
    public let refreshToken = "fake-refresh-token"

    private struct State {
        var signFaults: [SignFault] = []
        var metadataAvailable = true
        var issued: Set<String> = []
        var tokenRequests = 0
        var signRequests = 0
        var connections: Set<Int> = []
        var lastAssertion: String?
        var tokenLifetime: Int64 = 3600
        var held: [CheckedContinuation<Void, Never>] = []
        var heldRequests = 0
        var released = false
    }

    private let state = NIOLockedValueBox(State())

    public init(key: ServiceAccountKey) {
        self.key = key
    }

    /// Faults for the next `signJwt` calls, in order; calls after them succeed.
    public func scriptSignFaults(_ faults: [SignFault]) {
        state.withLockedValue { $0.signFaults = faults }
    }

    /// Answers every call a ``SignFault/held`` fault holds, and from now on answers such calls at once. A test
    /// calls it before it stops the fake's server, so that no held call keeps the server from shutting down.
    public func releaseHeld() {
        let held = state.withLockedValue { state in
            state.released = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    /// `signJwt` calls a ``SignFault/held`` fault has held so far.
    public var heldRequests: Int { state.withLockedValue { $0.heldRequests } }

    /// Whether the metadata server answers (false: 503).
    public var isMetadataAvailable: Bool {
        get { state.withLockedValue { $0.metadataAvailable } }
        set { state.withLockedValue { $0.metadataAvailable = newValue } }
    }

    /// The lifetime (`expires_in`) of the access tokens handed out.
    public var accessTokenLifetime: Int64 {
        get { state.withLockedValue { $0.tokenLifetime } }
        set { state.withLockedValue { $0.tokenLifetime = newValue } }
    }

    /// Access tokens handed out (every grant and the metadata server).
    public var tokenRequests: Int { state.withLockedValue { $0.tokenRequests } }
    /// `signJwt` requests received.
    public var signRequests: Int { state.withLockedValue { $0.signRequests } }
    /// The distinct client connections (remote ports) `signJwt` requests came over.
    public var signConnections: Int { state.withLockedValue { $0.connections.count } }
    /// The last JWT-bearer assertion received at the token endpoint.
    public var lastAssertion: String? { state.withLockedValue { $0.lastAssertion } }

    /// The routes: `POST /token`, the metadata server's token, `signJwt` and `generateAccessToken`.
    public var router: Router<FakeGoogleContext> {
        let router = Router(context: FakeGoogleContext.self)
        router.post("token") { request, _ in
            let body = String(buffer: try await request.body.collect(upTo: 1 << 16))
            var fields: [String: String] = [:]
            for pair in body.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            switch fields["grant_type"] {
            case "urn:ietf:params:oauth:grant-type:jwt-bearer":
                guard let assertion = fields["assertion"], let jws = try? CompactJWS(assertion),
                    jws.withSigningInput({ self.key.verificationKey.isValidRS256Signature(jws.signature, for: $0) }),
                    let claims = try? jws.payloadObject(), claims["iss"]?.stringValue == self.key.clientEmail,
                    claims["scope"]?.stringValue?.contains("cloud-platform") == true
                else { return Self.oauthError("invalid_grant", status: .badRequest) }
                self.state.withLockedValue { $0.lastAssertion = assertion }
                return self.issueToken()
            case "refresh_token":
                guard fields["refresh_token"] == self.refreshToken, fields["client_id"] != nil else {
                    return Self.oauthError("invalid_grant", status: .badRequest)
                }
                return self.issueToken()
            default:
                return Self.oauthError("unsupported_grant_type", status: .badRequest)
            }
        }
        router.get("computeMetadata/v1/instance/service-accounts/default/token") { request, _ in
            guard self.isMetadataAvailable else { return Response(status: .serviceUnavailable) }
            guard request.headers[values: HTTPField.Name("Metadata-Flavor")!].first == "Google" else {
                return Response(status: .forbidden)
            }
            return self.issueToken()
        }
        router.post("v1/projects/-/serviceAccounts/{target}") { request, context in
            let target = context.parameters.get("target") ?? ""
            let authorized = self.isIssued(request.headers[.authorization] ?? "")
            if target.hasSuffix(":generateAccessToken") {
                guard authorized else { return Self.googleError(401, "UNAUTHENTICATED") }
                let expiry = RFC3339.format(Date().addingTimeInterval(3600))
                let token = self.newToken()
                return Self.json(["accessToken": .string(token), "expireTime": .string(expiry)])
            }
            guard target.hasSuffix(":signJwt") else { return Response(status: .notFound) }
            let fault: SignFault? = self.state.withLockedValue { state in
                state.signRequests += 1
                if let port = context.remotePort { state.connections.insert(port) }
                return state.signFaults.isEmpty ? nil : state.signFaults.removeFirst()
            }
            if case .echoingCredentials(let status) = fault {
                let echoed = request.headers[.authorization] ?? ""
                return Self.googleError(status, "PERMISSION_DENIED", message: "request with \(echoed) was refused")
            }
            guard authorized else { return Self.googleError(401, "UNAUTHENTICATED") }
            let body = try StrictJSONParser().parseObject(Array(buffer: try await request.body.collect(upTo: 1 << 16)))
            let payload = body["payload"]?.stringValue ?? "{}"
            switch fault {
            case .status(let status):
                return Self.googleError(status, status == 403 ? "PERMISSION_DENIED" : "UNAVAILABLE")
            case .held:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let answerNow = self.state.withLockedValue { state in
                        state.heldRequests += 1
                        if !state.released { state.held.append(continuation) }
                        return state.released
                    }
                    if answerNow { continuation.resume() }
                }
            case .malformed:
                return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "{\"signedJwt\": ")))
            case .missingToken:
                return Self.json(["keyId": .string(self.key.privateKeyID)])
            case .mismatchedClaims:
                var claims = try StrictJSONParser().parseObject(Array(payload.utf8))
                claims["exp"] = .integer((claims["exp"]?.integerValue ?? 0) + 3600)
                return try self.signed(JSONValue.object(claims).jsonText)
            case .signedByAnotherKey:
                return try self.signed(payload, by: Self.impostor)
            case .garbageSignature:
                return try self.signed(payload, signature: (0..<256).map { _ in UInt8.random(in: 0...255) })
            case .echoingCredentials, nil:
                break
            }
            return try self.signed(payload)
        }
        // The account's public keys, as Google publishes them (the token server checks IAM's answers against them).
        router.get("service_accounts/v1/metadata/jwk/{email}") { _, context in
            guard context.parameters.get("email") == self.key.clientEmail else { return Response(status: .notFound) }
            return Self.json(JSONWebKeySet([self.key.verificationKey]).jsonObject)
        }
        return router
    }

    /// Another key, for tokens that carry the account's `kid` but not its signature.
    private static let impostor = try! TestKeys.keyNow(projectID: "impostor", name: "impostor")

    private func signed(_ payload: String, by signer: ServiceAccountKey? = nil, signature: [UInt8]? = nil) throws
        -> Response
    {
        let header: JSONObject = ["alg": "RS256", "kid": .string(key.privateKeyID), "typ": "JWT"]
        let input = Base64URL.encode(header.jsonBytes) + "." + Base64URL.encode(Array(payload.utf8))
        let bytes = try signature ?? LocalKeySigner(key: signer ?? key).signSynchronously(Array(input.utf8))
        let jwt = input + "." + Base64URL.encode(bytes)
        return Self.json(["keyId": .string(key.privateKeyID), "signedJwt": .string(jwt)])
    }

    private func newToken() -> String {
        let token = "ya29.fake-" + UUID().uuidString
        state.withLockedValue {
            $0.issued.insert(token)
            $0.tokenRequests += 1
        }
        return token
    }

    private func issueToken() -> Response {
        let token = newToken()
        return Self.json([
            "access_token": .string(token), "expires_in": .integer(accessTokenLifetime), "token_type": "Bearer",
        ])
    }

    /// Forgets every access token handed out, as if they had been revoked: the next call with one gets a 401.
    public func revokeAccessTokens() {
        state.withLockedValue { $0.issued.removeAll() }
    }

    private func isIssued(_ authorization: String) -> Bool {
        guard authorization.hasPrefix("Bearer ") else { return false }
        let token = String(authorization.dropFirst(7))
        return state.withLockedValue { $0.issued.contains(token) }
    }

    private static func json(_ object: JSONObject) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: object.jsonBytes))
        )
    }

    private static func googleError(_ status: Int, _ name: String, message: String? = nil) -> Response {
        let body: JSONObject = [
            "error": [
                "code": .integer(Int64(status)), "message": .string(message ?? "fake \(name.lowercased())"),
                "status": .string(name),
            ]
        ]
        return Response(
            status: .init(code: status),
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: body.jsonBytes))
        )
    }

    private static func oauthError(_ error: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: (["error": .string(error)] as JSONObject).jsonBytes))
        )
    }
}

/// The fake's request context: the client's port, to count connections.
public struct FakeGoogleContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remotePort: Int?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remotePort = source.channel.remoteAddress?.port
    }
}
