import Crypto
import FleetAuthClient
import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// A token server trusting an OpenID Provider served over real HTTP on loopback (``TestOpenIDProvider``), with a
/// driver `dana` linked to the provider's subject `sub-dana` and granted `v1`.
struct OpenIDFixture: @unchecked Sendable {
    static let client = "fleet-app"
    let provider: TestOpenIDProvider
    let server: TokenServer
    let store: SQLiteTokenServerStore
    let clock: ManualClock
    let log: LogRecorder

    var now: Int64 { clock.currentEpochSeconds }

    /// Runs `body` with the provider listening and the token server listening (both on loopback ports).
    static func run(
        keys: [TestOpenIDProvider.SigningKey]? = nil,
        autoCreate: AppUserRole? = nil,
        refetchInterval: Duration = .seconds(10),
        _ body: @escaping @Sendable (OpenIDFixture, any TestClientProtocol) async throws -> Void
    ) async throws {
        let provider = TestOpenIDProvider(keys: try keys ?? [.newRSA(), .newEC()])
        try await Application(router: provider.router).test(.live) { opClient in
            provider.issuer = "http://127.0.0.1:\(try #require(opClient.port))/op"
            let directory = try TestResources.required().temporaryDirectory("ts-oidc")
            let store = try SQLiteTokenServerStore(inMemory: ())
            let clock = ManualClock()
            let log = LogRecorder()
            let server = try await TokenServer(
                configuration: .init(
                    dataDirectory: directory,
                    bcryptCost: 4,
                    openIDProviders: [OpenIDProviderConfiguration(issuer: provider.issuer, audience: client)],
                    openIDAutoCreateRole: autoCreate,
                    openIDMinimumRefetchInterval: refetchInterval
                ),
                store: store,
                clock: clock,
                keyGenerator: TestKeys.generator,
                logger: .recording(to: log)
            )
            try await server.users.addUser(
                AppUser(username: "dana", role: .driver),
                identity: ExternalIdentity(issuer: provider.issuer, subject: "sub-dana")
            )
            try await server.users.grant(Grant(kind: .vehicle, id: "v1"), to: "dana")
            try await server.users.addUser(
                AppUser(username: "ops", role: .operator),
                password: TokenServerFixture.password
            )
            let fixture = OpenIDFixture(provider: provider, server: server, store: store, clock: clock, log: log)
            try await Application(router: server.router).test(.live) { client in try await body(fixture, client) }
        }
    }

    func idToken(
        _ subject: String = "sub-dana",
        claims: JSONObject = [:],
        removing: [String] = [],
        header: JSONObject = [:],
        key: TestOpenIDProvider.SigningKey? = nil
    ) throws -> String {
        try provider.idToken(
            subject: subject,
            audience: Self.client,
            now: now,
            claims: claims,
            removing: removing,
            header: header,
            key: key
        )
    }
}

extension TestClientProtocol {
    /// `POST /v1/sessions {"idToken": token}`.
    func idTokenLogin(_ token: String) async throws -> (HTTPResponse.Status, JSONObject) {
        let (status, body, _) = try await json(
            .post,
            "/v1/sessions",
            body: JSONObject(["idToken": .string(token)]).jsonText
        )
        return (status, body)
    }
}

@Suite("Token server: login with an OpenID Provider's ID token", .temporaryResources)
struct OpenIDLoginTests {
    @Test("an RS256 or ES256 ID token of a linked identity is a session like a password login's; tokens follow grants")
    func linkedLogin() async throws {
        try await OpenIDFixture.run { fixture, client in
            for key in fixture.provider.keys {
                let (status, body) = try await client.idTokenLogin(try fixture.idToken(key: key))
                #expect(status == .created, "\(key.algorithm): \(body.jsonText)")
                #expect(body["username"] == "dana" && body["role"] == "driver")
                let session = try #require(body["sessionToken"]?.stringValue)
                #expect(Set(body.keys) == ["sessionToken", "username", "role", "expiresAt"])
                #expect(try await client.json(.get, "/token/driver/v1", bearer: session).0 == .ok)
                #expect(try await client.json(.get, "/token/driver/v2", bearer: session).0 == .forbidden)
            }
            // An ID token is not accepted as a session, nor a session as an ID token.
            #expect(try await client.json(.get, "/token/driver/v1", bearer: try fixture.idToken()).0 == .unauthorized)
            #expect(try await client.idTokenLogin(try client.login("ops")).0 == .unauthorized)
        }
    }

    @Test("every refused ID token gets the password login's 401 body; the reason is logged, never the token")
    func hostileRows() async throws {
        try await OpenIDFixture.run { fixture, client in
            let (_, wrongPassword, _) = try await client.json(
                .post,
                "/v1/sessions",
                body: #"{"username":"dana","password":"wrong password"}"#
            )
            let now = fixture.now
            let stranger = try TestOpenIDProvider.SigningKey.newRSA()
            let strangerWithKnownKid: TestOpenIDProvider.SigningKey = {
                guard case .rsa(let key) = stranger, case .rsa(let known) = fixture.provider.keys[0] else {
                    return stranger
                }
                var object = key.jsonObject
                object["private_key_id"] = .string(known.privateKeyID)
                return .rsa(try! ServiceAccountKey(json: JSONValue.object(object).jsonBytes, source: "stranger"))
            }()
            let rsa = fixture.provider.keys[0]
            guard case .rsa(let rsaKey) = rsa else { return }
            let header: JSONObject = ["alg": "HS256", "typ": "JWT", "kid": .string(rsa.kid)]
            let payload: JSONObject = [
                "iss": .string(fixture.provider.issuer), "sub": "sub-dana", "aud": .string(OpenIDFixture.client),
                "iat": .integer(now), "exp": .integer(now + 600),
            ]
            let input = Base64URL.encode(header.jsonBytes) + "." + Base64URL.encode(payload.jsonBytes)
            let hmac = Array(
                HMAC<SHA256>.authenticationCode(
                    for: Array(input.utf8),
                    using: SymmetricKey(data: Array(rsaKey.verificationKey.pemRepresentation.utf8))
                )
            )
            let noneHeader: JSONObject = ["alg": "none", "typ": "JWT"]
            let rows: [(String, String)] = [
                ("unlinked identity", try fixture.idToken("sub-nobody")),
                ("wrong issuer", try fixture.idToken(claims: ["iss": "http://127.0.0.1:1/op"])),
                (
                    "issuer with a trailing slash",
                    try fixture.idToken(claims: ["iss": .string(fixture.provider.issuer + "/")])
                ),
                ("wrong audience", try fixture.idToken(claims: ["aud": "another-app"])),
                (
                    "several audiences, no azp",
                    try fixture.idToken(claims: ["aud": [.string(OpenIDFixture.client), "x"]])
                ),
                ("expired", try fixture.idToken(claims: ["exp": .integer(now - 61), "iat": .integer(now - 700)])),
                ("issued in the future", try fixture.idToken(claims: ["iat": .integer(now + 120)])),
                ("not yet valid", try fixture.idToken(claims: ["nbf": .integer(now + 120)])),
                ("no sub", try fixture.idToken(removing: ["sub"])),
                ("alg none", Base64URL.encode(noneHeader.jsonBytes) + "." + Base64URL.encode(payload.jsonBytes) + "."),
                (
                    "alg none, signed",
                    Base64URL.encode(noneHeader.jsonBytes) + "." + Base64URL.encode(payload.jsonBytes) + ".AA"
                ),
                ("HS256 keyed with the public key", input + "." + Base64URL.encode(hmac)),
                (
                    "jwk in the header",
                    try fixture.idToken(header: ["jwk": .object(stranger.jwk.jsonObject)], key: stranger)
                ),
                ("jku in the header", try fixture.idToken(header: ["jku": .string(fixture.provider.issuer + "/jwks")])),
                ("x5u in the header", try fixture.idToken(header: ["x5u": "https://evil.example.com/cert.pem"])),
                ("another issuer's key under a known kid", try fixture.idToken(key: strangerWithKnownKid)),
                ("not a JWT", "not-a-jwt"),
                ("empty", ""),
            ]
            for (name, token) in rows {
                let (status, body) = try await client.idTokenLogin(token)
                #expect(status == .unauthorized, "\(name)")
                #expect(body == wrongPassword, "\(name): \(body.jsonText)")
            }
            let lines = fixture.log.lines.filter { $0.contains("ID token refused") }
            #expect(lines.count == rows.count)
            #expect(lines.contains { $0.contains("unlinked_identity") })
            #expect(lines.contains { $0.contains("untrusted_key_reference") })
            #expect(lines.contains { $0.contains("invalid_signature") })
            #expect(!fixture.log.lines.contains { line in rows.contains { $0.1.count > 20 && line.contains($0.1) } })
            // Both fields, or a number, are 400.
            let both = #"{"idToken":"x.y.z","username":"dana","password":"correct horse battery"}"#
            #expect(try await client.json(.post, "/v1/sessions", body: both).0 == .badRequest)
            #expect(try await client.json(.post, "/v1/sessions", body: #"{"idToken":1}"#).0 == .badRequest)
        }
    }

    @Test("refusals are throttled like password failures: by address, and a locked-out user stays locked out")
    func throttling() async throws {
        try await OpenIDFixture.run { fixture, client in
            // dana locked out by password guesses: her valid ID token is 429 too.
            for _ in 0..<5 {
                _ = try await client.json(
                    .post,
                    "/v1/sessions",
                    body: #"{"username":"dana","password":"wrong password"}"#
                )
            }
            #expect(try await client.idTokenLogin(try fixture.idToken()).0 == .tooManyRequests)
            fixture.clock.advance(by: .seconds(31))
            #expect(try await client.idTokenLogin(try fixture.idToken()).0 == .created)
            // Bad ID tokens from one address: the 20th failure locks the address.
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<20 { statuses.append(try await client.idTokenLogin(try fixture.idToken("sub-nobody")).0) }
            #expect(statuses.filter { $0 == .unauthorized }.count >= 14)
            #expect(try await client.idTokenLogin(try fixture.idToken()).0 == .tooManyRequests)
        }
    }

    @Test("a rotated JWK set is fetched once for the new kid; made-up kids cost one fetch per 10 s")
    func rotation() async throws {
        try await OpenIDFixture.run { fixture, client in
            #expect(try await client.idTokenLogin(try fixture.idToken()).0 == .created)
            let fetchesBefore = fixture.provider.keySetFetches
            let rotated = TestOpenIDProvider.SigningKey.newEC()
            let old = fixture.provider.keys[0]
            fixture.provider.keys = [rotated]
            let (status, body) = try await client.idTokenLogin(try fixture.idToken(key: rotated))
            #expect(status == .created, "\(body.jsonText)")
            #expect(fixture.provider.keySetFetches == fetchesBefore + 1)
            // The retired key no longer signs logins once the set was read again.
            #expect(try await client.idTokenLogin(try fixture.idToken(key: old)).0 == .unauthorized)
            for index in 0..<5 {
                let header: JSONObject = ["kid": .string("made-up-\(index)")]
                #expect(
                    try await client.idTokenLogin(try fixture.idToken(header: header, key: rotated)).0 == .unauthorized
                )
            }
            #expect(fixture.provider.keySetFetches == fetchesBefore + 1)
            // 10 s after the last refetch, the next unknown kid may cause one again: a second rotation is read.
            let again = try TestOpenIDProvider.SigningKey.newRSA()
            fixture.provider.keys = [again]
            fixture.clock.advance(by: .milliseconds(9999))
            #expect(try await client.idTokenLogin(try fixture.idToken(key: again)).0 == .unauthorized)
            #expect(fixture.provider.keySetFetches == fetchesBefore + 1)
            fixture.clock.advance(by: .milliseconds(1))
            #expect(try await client.idTokenLogin(try fixture.idToken(key: again)).0 == .created)
            #expect(fixture.provider.keySetFetches == fetchesBefore + 2)
        }
    }

    @Test(
        "a key replaced under the same kid is refused (no refetch for bad signatures); a late provider is read within a second"
    )
    func replacedKey() async throws {
        let original: [TestOpenIDProvider.SigningKey] = [.ec(P256.Signing.PrivateKey(), kid: "kid-1")]
        try await OpenIDFixture.run(keys: original) { fixture, client in
            let first = try await client.idTokenLogin(try fixture.idToken()).0
            #expect(first == .created)
            let replaced = TestOpenIDProvider.SigningKey.ec(P256.Signing.PrivateKey(), kid: "kid-1")
            fixture.provider.keys = [replaced]
            let fetches = fixture.provider.keySetFetches
            let second = try await client.idTokenLogin(try fixture.idToken(key: replaced)).0
            #expect(second == .unauthorized)
            #expect(fixture.provider.keySetFetches == fetches)
        }
        // The provider's set unreadable at the first logins (the second spends the unknown-kid refetch), readable
        // later: while no keys were ever read it is tried again once a second, not once per refetch interval.
        try await OpenIDFixture.run { fixture, client in
            fixture.provider.isAvailable = false
            #expect(try await client.idTokenLogin(try fixture.idToken()).0 == .unauthorized)
            #expect(try await client.idTokenLogin(try fixture.idToken()).0 == .unauthorized)
            #expect(fixture.provider.keySetFetches == 2)
            fixture.provider.isAvailable = true
            fixture.clock.advance(by: .milliseconds(999))
            #expect(try await client.idTokenLogin(try fixture.idToken()).0 == .unauthorized)
            #expect(fixture.provider.keySetFetches == 2)
            fixture.clock.advance(by: .milliseconds(1))
            let (status, body) = try await client.idTokenLogin(try fixture.idToken())
            #expect(status == .created, "\(body.jsonText)")
        }
    }

    @Test("a JWK set that cannot be fetched: logins refused with a clear log line, no crash; it recovers")
    func outage() async throws {
        try await OpenIDFixture.run { fixture, client in
            fixture.provider.isAvailable = false
            // The server's first fetch fails: closed.
            #expect(try await client.idTokenLogin(try fixture.idToken()).0 == .unauthorized)
            let errors = fixture.log.lines.filter { $0.hasPrefix("error") }
            #expect(errors.count == 1)
            #expect(errors.first?.contains("answered 503") == true)
            #expect(errors.first?.contains(fixture.provider.issuer) == true)
            // Password logins are unaffected.
            _ = try await client.login("ops")
        }
        // Recovery, on a manual clock.
        let provider = TestOpenIDProvider(keys: [try .newRSA()])
        try await Application(router: provider.router).test(.live) { opClient in
            provider.issuer = "http://127.0.0.1:\(try #require(opClient.port))/op"
            provider.isAvailable = false
            let clock = ManualClock()
            let federation = try OpenIDFederation(
                providers: [OpenIDProviderConfiguration(issuer: provider.issuer, audience: OpenIDFixture.client)],
                clock: clock
            )
            let token = try provider.idToken(
                subject: "s",
                audience: OpenIDFixture.client,
                now: clock.currentEpochSeconds
            )
            await expectCode(TokenVerificationError.unknownKeyID) {
                try await federation.verify(token, nowSeconds: clock.currentEpochSeconds)
            }
            #expect(await federation.prefetch().map(\.keys) == [0])
            provider.isAvailable = true
            #expect(try await federation.verify(token, nowSeconds: clock.currentEpochSeconds).subject == "s")
        }
    }

    @Test("--oidc-auto-create: an unlinked identity becomes a user without grants, once")
    func autoCreate() async throws {
        try await OpenIDFixture.run(autoCreate: .consumer) { fixture, client in
            let (status, body) = try await client.idTokenLogin(try fixture.idToken("sub-new-rider"))
            #expect(status == .created)
            let username = try #require(body["username"]?.stringValue)
            #expect(username.hasPrefix("oidc-") && body["role"] == "consumer")
            #expect(
                try await client.idTokenLogin(try fixture.idToken("sub-new-rider")).1["username"]?.stringValue
                    == username
            )
            let session = try #require(body["sessionToken"]?.stringValue)
            #expect(try await client.json(.get, "/token/consumer/t1", bearer: session).0 == .forbidden)
            let identities = try await fixture.server.users.identities()
            #expect(
                identities[username] == [ExternalIdentity(issuer: fixture.provider.issuer, subject: "sub-new-rider")]
            )
            // A linked identity still logs in as its user.
            #expect(try await client.idTokenLogin(try fixture.idToken()).1["username"] == "dana")
        }
        #expect(throws: GoogleAPIError.self) {
            try OpenIDFederation(
                providers: [OpenIDProviderConfiguration(issuer: "https://op.example.com", audience: "a")],
                autoCreateRole: .operator
            )
        }
    }

    @Test("the admin API links identities: a user added with a subject, a link to an existing user, refusals")
    func adminAPI() async throws {
        try await OpenIDFixture.run { fixture, client in
            let ops = try await client.login("ops")
            // Without an issuer: the server's only issuer.
            let (added, addedBody, _) = try await client.json(
                .post,
                "/v1/admin/users",
                bearer: ops,
                body: #"{"username":"rita","role":"consumer","subject":"sub-rita"}"#
            )
            #expect(added == .created, "\(addedBody.jsonText)")
            #expect(try await client.idTokenLogin(try fixture.idToken("sub-rita")).1["username"] == "rita")
            // A link to an existing password user.
            let (linked, _, _) = try await client.json(
                .post,
                "/v1/admin/users/ops/identities",
                bearer: ops,
                body: JSONObject(["subject": "sub-ops", "issuer": .string(fixture.provider.issuer)]).jsonText
            )
            #expect(linked == .created)
            #expect(try await client.idTokenLogin(try fixture.idToken("sub-ops")).1["role"] == "operator")
            // Refusals: an identity linked twice, a password and a subject, a bad issuer, a control character.
            let refusals: [(String, String, HTTPResponse.Status)] = [
                ("/v1/admin/users", #"{"username":"rita2","role":"consumer","subject":"sub-rita"}"#, .conflict),
                (
                    "/v1/admin/users", #"{"username":"x","role":"driver","subject":"s","password":"long enough 1"}"#,
                    .badRequest
                ),
                (
                    "/v1/admin/users", #"{"username":"y","role":"driver","subject":"s","issuer":"ftp://op"}"#,
                    .badRequest
                ),
                ("/v1/admin/users", #"{"username":"z","role":"driver","subject":"a\u0001b"}"#, .badRequest),
                ("/v1/admin/users/nobody/identities", #"{"subject":"s-1"}"#, .notFound),
            ]
            for (path, body, expected) in refusals {
                #expect(try await client.json(.post, path, bearer: ops, body: body).0 == expected, "\(body)")
            }
            #expect(try await fixture.server.users.users().map(\.user.username) == ["dana", "ops", "rita"])
            let (_, list, _) = try await client.json(.get, "/v1/admin/users", bearer: ops)
            let rita = list["users"]?.arrayValue?.compactMap(\.objectValue).first { $0["username"] == "rita" }
            #expect(rita?["identities"] == [["subject": "sub-rita"]])
        }
    }

    @Test("TokenServerSession logs in with an ID token, as an iOS app that signed in with its provider would")
    func clientSession() async throws {
        try await OpenIDFixture.run { fixture, client in
            let port = try #require(client.port)
            let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let session = try await TokenServerSession.logIn(baseURL: base, idToken: try fixture.idToken())
            #expect(session.username == "dana" && session.role == .driver)
            let token = try await session.fetcher(.driver).fetchToken(for: .vehicle("v1"))
            let claims = try StrictJSONParser().parseObject(try CompactJWS(token.jwt).payload)
            #expect(claims["authorization"] == .object(["vehicleid": "v1"]))
            let refused = await #expect(throws: FleetTokenError.self) {
                try await TokenServerSession.logIn(baseURL: base, idToken: try fixture.idToken("sub-nobody"))
            }
            #expect(refused?.code == .endpointRejected && refused?.httpStatus == 401)
        }
    }
}
