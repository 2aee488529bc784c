public import Crypto
public import FleetAuthCore
public import FleetAuthJWT
import Foundation
public import Hummingbird
import NIOConcurrencyHelpers

/// An OpenID Provider's public face for tests that cannot reach a real one: a discovery document and a JWK set
/// served over real HTTP (run ``application`` with Hummingbird), and ID tokens signed with real RS256 and ES256
/// keys. The keys can be swapped (a rotation) and the JWK set made to fail (an outage) while a token server uses it.
/// The tests against a real provider run django-oauth-toolkit (`Tests/OIDC`).
public final class TestOpenIDProvider: Sendable {
    /// A signing key of the provider.
    public enum SigningKey: Sendable {
        case rsa(ServiceAccountKey)
        case ec(P256.Signing.PrivateKey, kid: String)

        public var kid: String {
            switch self {
            case .rsa(let key): key.privateKeyID
            case .ec(_, let kid): kid
            }
        }

        public var algorithm: String {
            switch self {
            case .rsa: "RS256"
            case .ec: "ES256"
            }
        }

        /// The public half as a JWK.
        public var jwk: JSONWebKey {
            switch self {
            case .rsa(let key):
                var jwk = key.verificationKey.jwk
                jwk.keyID = key.privateKeyID
                return jwk
            case .ec(let key, let kid):
                let raw = Array(key.publicKey.rawRepresentation)
                return JSONWebKey(keyID: kid, x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))
            }
        }

        /// The JWS signature of `input` (PKCS #1 v1.5 for RSA; `r ‖ s` for ECDSA).
        public func sign(_ input: [UInt8]) throws -> [UInt8] {
            switch self {
            case .rsa(let key): try LocalKeySigner(key: key).signSynchronously(input)
            case .ec(let key, _): Array(try key.signature(for: input).rawRepresentation)
            }
        }

        /// A new 2048-bit RSA key.
        public static func newRSA() throws -> Self {
            .rsa(try TestKeys.keyNow(projectID: "test-op", name: "op"))
        }

        /// A new P-256 key.
        public static func newEC() -> Self {
            .ec(P256.Signing.PrivateKey(), kid: "ec-" + UUID().uuidString.prefix(8).lowercased())
        }
    }

    private struct State {
        var issuer = ""
        var keys: [SigningKey]
        var available = true
        var keySetFetches = 0
    }

    private let state: NIOLockedValueBox<State>

    public init(keys: [SigningKey]) {
        state = NIOLockedValueBox(State(keys: keys))
    }

    /// The issuer identifier (set once the server listens: `http://127.0.0.1:PORT/op`).
    public var issuer: String {
        get { state.withLockedValue { $0.issuer } }
        set { state.withLockedValue { $0.issuer = newValue } }
    }

    /// The published keys; the first signs by default.
    public var keys: [SigningKey] {
        get { state.withLockedValue { $0.keys } }
        set { state.withLockedValue { $0.keys = newValue } }
    }

    /// Whether the JWK set answers (false: 503).
    public var isAvailable: Bool {
        get { state.withLockedValue { $0.available } }
        set { state.withLockedValue { $0.available = newValue } }
    }

    /// How many times the JWK set was requested (refused requests included).
    public var keySetFetches: Int { state.withLockedValue { $0.keySetFetches } }

    /// The provider's HTTP API: `/op/.well-known/openid-configuration` and `/op/jwks`.
    public var router: Router<BasicRequestContext> {
        let router = Router()
        router.get("op/.well-known/openid-configuration") { _, _ -> Response in
            let issuer = self.issuer
            return Self.json([
                "issuer": .string(issuer), "jwks_uri": .string(issuer + "/jwks"),
                "id_token_signing_alg_values_supported": .array([.string("RS256"), .string("ES256")]),
            ])
        }
        router.get("op/jwks") { _, _ -> Response in
            let (keys, available) = self.state.withLockedValue { state in
                state.keySetFetches += 1
                return (state.keys, state.available)
            }
            guard available else { return Response(status: .serviceUnavailable) }
            return Self.json(JSONWebKeySet(keys: keys.map(\.jwk)).jsonObject)
        }
        return router
    }

    private static func json(_ object: JSONObject) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: object.jsonBytes))
        )
    }

    /// An ID token: the standard claims for `subject` and `audience` at `now` (valid ten minutes), with `claims`
    /// merged over them (and the `removing` ones taken out) and `header` over `{"alg","typ","kid"}`, signed by `key` (default: the first key).
    public func idToken(
        subject: String,
        audience: String,
        now: Int64,
        claims: JSONObject = [:],
        removing: [String] = [],
        header: JSONObject = [:],
        key: SigningKey? = nil
    ) throws -> String {
        guard let key = key ?? keys.first else { throw TestOpenIDProviderError() }
        var payload: JSONObject = [
            "iss": .string(issuer), "sub": .string(subject), "aud": .string(audience), "iat": .integer(now),
            "exp": .integer(now + 600), "email": .string("\(subject)@example.com"),
        ]
        for member in claims { payload[member.key] = member.value }
        for name in removing { payload[name] = nil }
        var protected: JSONObject = ["alg": .string(key.algorithm), "typ": .string("JWT"), "kid": .string(key.kid)]
        for member in header { protected[member.key] = member.value }
        let input = Base64URL.encode(protected.jsonBytes) + "." + Base64URL.encode(payload.jsonBytes)
        return input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
    }
}

struct TestOpenIDProviderError: Error {}
