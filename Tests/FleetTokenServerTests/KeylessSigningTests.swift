import FleetAuthCore
import FleetAuthIAM
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

/// Token families that sign without a key the token server holds: through IAM `signJwt` (a fake Google on loopback,
/// with scripted faults) or in a PKCS#11 token (SoftHSM2).
@Suite("Token server: keyless families (IAM, PKCS#11)", .temporaryResources)
struct KeylessSigningTests {
    struct Fixture {
        let directory: String
        let store: SQLiteTokenServerStore
        let clock: ManualClock
        let log: LogRecorder

        init() throws {
            directory = try TestResources.required().temporaryDirectory("ts-keyless")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try SQLiteTokenServerStore(path: directory + "/" + TokenServer.databaseFileName)
            clock = ManualClock()
            log = LogRecorder()
        }

        func server(_ keyless: [TokenFamily: KeylessSigner]) async throws -> TokenServer {
            let server = try await TokenServer(
                // A generous probe deadline: a loaded test machine must not turn IAM's answer into a timeout.
                configuration: .init(dataDirectory: directory, bcryptCost: 4, readinessTimeout: .seconds(60)),
                store: store,
                keylessSigners: keyless,
                clock: clock,
                keyGenerator: TestKeys.generator,
                logger: .recording(to: log)
            )
            if try await server.users.users().isEmpty {
                try await server.users.addUser(
                    AppUser(username: "dana", role: .driver),
                    password: TokenServerFixture.password
                )
                try await server.users.grant(Grant(kind: .vehicle, id: "v1"), to: "dana")
            }
            return server
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    static let googleKey = try! TestKeys.keyNow(projectID: "demo-project", name: "fleet-driver")

    func withGoogle(_ body: @escaping @Sendable (FakeGoogleAuth, KeylessSigner) async throws -> Void) async throws {
        let fake = FakeGoogleAuth(key: Self.googleKey)
        try await Application(router: fake.router).test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let signer = IAMCredentialsSigner(
                serviceAccountEmail: fake.key.clientEmail,
                accessTokens: AccessTokenSource(
                    credentials: .metadataServer(host: String(base.dropFirst(7))),
                    timeout: .seconds(30)
                ),
                configuration: .init(baseURL: base, attemptTimeout: .seconds(30), initialBackoff: .milliseconds(1))
            )
            try await body(fake, .iam(signer, googleKeysURL: base))
        }
    }

    @Test(
        "an IAM family: its tokens come from signJwt, no key of it is kept, and the trust file names Google's key set"
    )
    func iamFamily() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try await withGoogle { fake, signer in
            let server = try await fixture.server([.driver: signer])
            try await Application(router: server.router).test(.router) { client in
                let session = try await client.login("dana")
                let (status, body, _) = try await client.json(.get, "/token/driver/v1", bearer: session)
                #expect(status == .ok)
                let jwt = try #require(body["jwt"]?.stringValue)
                let jws = try CompactJWS(jwt)
                #expect(jws.keyID == fake.key.privateKeyID)
                #expect(jws.withSigningInput { fake.key.verificationKey.isValidRS256Signature(jws.signature, for: $0) })
                #expect(try jws.payloadObject()["iss"]?.stringValue == fake.key.clientEmail)
                // The token server does not publish IAM's keys: Google does.
                #expect(
                    try await client.json(.get, "/service_accounts/v1/metadata/jwk/\(fake.key.clientEmail)").0
                        == .notFound
                )
            }
            let record = try await fixture.store.signingKeys().last { $0.family == .driver && $0.retiredAt == nil }
            #expect(record?.material == .external(kind: "iam", email: fake.key.clientEmail))
            let driverFiles = try FileManager.default.contentsOfDirectory(atPath: fixture.directory + "/keys")
                .filter { $0.hasPrefix("driver-") }
            #expect(driverFiles.isEmpty)
            let trust = server.keyring.trustConfiguration(baseURL: "http://token-server")
            let entry = try #require(trust.serviceAccounts.first { $0.account.email == fake.key.clientEmail })
            #expect(
                entry.keySource
                    == .jwksURL("\(signer.publicationBase)/service_accounts/v1/metadata/jwk/\(fake.key.clientEmail)")
            )
            #expect(entry.account.roles == [.driverSdkUser])
            #expect(entry.account.project == "demo-project")
        }
    }

    /// Scripts `fault` for the next `signJwt`: dana's driver token is then 503 with Google's error body and no token,
    /// the log line is handed to `check`, and nothing is audited; the next request, signed as usual, is 200 and
    /// audited.
    func expectRefusedOnce(
        _ fault: FakeGoogleAuth.SignFault,
        sourceLocation: SourceLocation = #_sourceLocation,
        check: @escaping @Sendable (_ logLine: String) -> Void
    ) async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try await withGoogle { fake, signer in
            let server = try await fixture.server([.driver: signer])
            try await Application(router: server.router).test(.router) { client in
                let session = try await client.login("dana")
                // A fault that is not transient is not retried: one answer is enough.
                fake.scriptSignFaults([fault])
                let (status, body, _) = try await client.json(.get, "/token/driver/v1", bearer: session)
                #expect(status == .serviceUnavailable, sourceLocation: sourceLocation)
                #expect(body["error"]?.objectValue?["status"] == "UNAVAILABLE", sourceLocation: sourceLocation)
                #expect(body["jwt"] == nil && body["token"] == nil, sourceLocation: sourceLocation)
                check(try #require(fixture.log.lines.first { $0.contains("cannot sign a token") }))
                #expect(try await fixture.store.recentEntries(limit: 10).isEmpty, sourceLocation: sourceLocation)
                // Signing works again: so do tokens.
                #expect(try await client.json(.get, "/token/driver/v1", bearer: session).0 == .ok)
            }
            #expect(try await fixture.store.recentEntries(limit: 10).count == 1, sourceLocation: sourceLocation)
        }
    }

    @Test("IAM's 403 answers 503 with Google's error body, and the log names the permission and the role")
    func forbidden() async throws {
        try await expectRefusedOnce(.status(403)) { line in
            #expect(line.contains("iam.serviceAccounts.signJwt"))
            #expect(line.contains("roles/iam.serviceAccountTokenCreator"))
        }
    }

    @Test("a token whose claims IAM changed is never handed out")
    func mismatch() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try await withGoogle { fake, signer in
            let server = try await fixture.server([.driver: signer])
            fake.scriptSignFaults([.mismatchedClaims])
            try await Application(router: server.router).test(.router) { client in
                let session = try await client.login("dana")
                let (status, body, _) = try await client.json(.get, "/token/driver/v1", bearer: session)
                #expect(status == .serviceUnavailable)
                #expect(body["jwt"] == nil)
            }
        }
    }

    @Test(
        "IAM's answer signed by another key, or with a garbage signature: 503, logged with the reason, nothing audited",
        arguments: [FakeGoogleAuth.SignFault.signedByAnotherKey, .garbageSignature]
    )
    func unverifiedSignature(fault: FakeGoogleAuth.SignFault) async throws {
        try await expectRefusedOnce(fault) { line in #expect(line.contains("signature does not verify"), "\(line)") }
    }

    @Test("an IAM error that quotes the caller's access token: the log and /readyz show no token")
    func echoedCredentials() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try await withGoogle { fake, signer in
            let server = try await fixture.server([.driver: signer])
            try await Application(router: server.router).test(.router) { client in
                let session = try await client.login("dana")
                fake.scriptSignFaults([.echoingCredentials(403)])
                #expect(try await client.json(.get, "/token/driver/v1", bearer: session).0 == .serviceUnavailable)
                let line = try #require(fixture.log.lines.first { $0.contains("cannot sign a token") })
                #expect(line.contains("Bearer [REDACTED]"), "\(line)")
                #expect(!line.contains("ya29."), "\(line)")
                let (_, readiness, _) = try await client.json(.get, "/readyz")
                #expect(!readiness.jsonText.contains("ya29."))
            }
        }
    }

    @Test("rotating a keyless family is refused: its key lives elsewhere")
    func rotateRefused() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try await withGoogle { _, signer in
            let server = try await fixture.server([.driver: signer])
            let error = await #expect(throws: GoogleAPIError.self) { try await server.keyring.rotate(.driver) }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.message.contains("IAM") == true)
            _ = try await server.keyring.rotate(.consumer)
        }
    }

    @Test(
        "switching to keyless retires the local key, still published until its tokens expire; switching back makes a new one"
    )
    func switching() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try await withGoogle { fake, signer in
            let local = try await fixture.server([:])
            let old = try local.keyring.signingKey(for: .driver)
            let oldFile = try #require(old.record.material.path)
            let keyless = try await fixture.server([.driver: signer])
            #expect(try keyless.keyring.signingKey(for: .driver).record.material.isExternal)
            #expect(keyless.keyring.publishedKeys(email: old.email)?.map(\.keyID) == [old.record.kid])
            fixture.clock.advance(by: keyless.keyring.publicationWindow)
            #expect(try await keyless.keyring.prune() == [old.record.kid])
            #expect(!FileManager.default.fileExists(atPath: oldFile))
            let back = try await fixture.server([:])
            let fresh = try back.keyring.signingKey(for: .driver)
            #expect(fresh.key != nil && fresh.record.kid != old.record.kid)
            _ = fake
        }
    }

    @Test(
        "a PKCS#11 family: tokens signed in the token, its public key published with its kid",
        .enabled(
            if: SoftHSM.isAvailable || SoftHSM.isRequired,
            "SoftHSM2 is not installed (apt-get install softhsm2 opensc)"
        )
    )
    func pkcs11Family() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let token = try await SoftHSM.sharedToken()
        let uri = try PKCS11URI(token.uri(object: "token-server-driver"))
        _ = try await PKCS11Signer.generateKeyPair(uri: uri)
        let email = "hsm-driver@demo-project.iam.gserviceaccount.com"
        let signer = try await PKCS11Signer(uri: uri, serviceAccountEmail: email)
        let server = try await fixture.server([.driver: .pkcs11(signer)])
        try await Application(router: server.router).test(.router) { client in
            let session = try await client.login("dana")
            let (status, body, _) = try await client.json(.get, "/token/driver/v1", bearer: session)
            #expect(status == .ok)
            let jwt = try #require(body["jwt"]?.stringValue)
            let (keysStatus, keySet, _) = try await client.json(.get, "/service_accounts/v1/metadata/jwk/\(email)")
            #expect(keysStatus == .ok)
            let keys = try JSONWebKeySet(json: keySet.jsonBytes).verificationKeys()
            #expect(keys.map(\.keyID) == [signer.keyID])
            var trust = TrustStore()
            trust.add(keys, issuer: email)
            let verified = try FleetEngineTokenVerifier(trustStore: trust).verify(jwt, now: fixture.clock.currentDate)
            #expect(verified.keyID == signer.keyID)
        }
        let trust = server.keyring.trustConfiguration(baseURL: "http://token-server")
        #expect(
            trust.serviceAccounts.first { $0.account.email == email }?.keySource
                == .jwksURL("http://token-server/service_accounts/v1/metadata/jwk/\(email)")
        )
    }
}

extension KeylessSigner {
    /// The base URL of Google's key sets this signer names (IAM families).
    var publicationBase: String {
        if case .google(let keysURL) = publication { return keysURL }
        return ""
    }
}

/// `/healthz` and `/readyz` as a load balancer sees them while IAM refuses to sign and after it recovers.
@Suite("Token server: health and readiness", .temporaryResources)
struct TokenServerReadinessTests {
    @Test("/readyz names the family that cannot sign (503), probes it again, and is ready once IAM signs")
    func signingFailure() async throws {
        // Orchestrators' probes give up after 1 s by default: every check's deadline is below that.
        #expect(TokenServer.Configuration(dataDirectory: "unused").readinessTimeout < .seconds(1))
        let fixture = try KeylessSigningTests.Fixture()
        defer { fixture.remove() }
        try await KeylessSigningTests().withGoogle { fake, signer in
            let server = try await fixture.server([.driver: signer])
            try await Application(router: server.router).test(.router) { client in
                #expect(try await client.json(.get, "/healthz").0 == .ok)
                fake.scriptSignFaults([.status(403)])
                let (status, body, headers) = try await client.json(.get, "/readyz")
                #expect(status == .serviceUnavailable)
                #expect(headers[.cacheControl] == "no-store")
                #expect(body["status"] == "not ready")
                let components = try #require(body["components"]?.objectValue)
                #expect(components["store"]?.objectValue?["status"] == "ok")
                let signing = try #require(components["signing"]?.objectValue)
                #expect(signing["status"] == "failing")
                #expect(signing["error"]?.stringValue?.hasPrefix("driver: ") == true, "\(signing)")
                #expect(try await client.json(.get, "/healthz").0 == .ok)
                // IAM signs again: the next probe tries the family and finds it working.
                let (ready, readyBody, _) = try await client.json(.get, "/readyz")
                #expect(ready == .ok, "\(readyBody)")
                #expect(readyBody["status"] == "ready")
                // Once a family has signed, probes do not call IAM again while its tokens keep signing.
                let calls = fake.signRequests
                #expect(try await client.json(.get, "/readyz").0 == .ok)
                #expect(fake.signRequests == calls)
            }
        }
    }
}
