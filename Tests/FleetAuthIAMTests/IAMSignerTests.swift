import FleetAuthCore
import FleetAuthIAM
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The IAM signer and its access tokens over real HTTP on loopback, against ``FakeGoogleAuth``: Google's token
/// endpoint, metadata server and `signJwt`, with scripted faults. Nothing here reaches Google or the metadata
/// address: every base URL and metadata host is the fake's.
@Suite("IAM signJwt and access tokens against a fake Google", .serialized)
struct IAMSignerTests {
    struct Google {
        let fake: FakeGoogleAuth
        let base: String
        let host: String

        /// Deadlines are generous (the whole suite runs beside every other on two cores) except where a test is
        /// about them.
        func signer(
            credentials: GoogleCredentials? = nil,
            clock: any WallClock = .system,
            attemptClock: any WallClock = .system,
            attempts: Int = 3,
            timeout: Duration = .seconds(30)
        ) -> IAMCredentialsSigner {
            IAMCredentialsSigner(
                serviceAccountEmail: fake.key.clientEmail,
                accessTokens: AccessTokenSource(
                    credentials: credentials ?? .metadataServer(host: host),
                    timeout: .seconds(30),
                    clock: clock
                ),
                configuration: .init(
                    baseURL: base,
                    attemptTimeout: timeout,
                    maximumAttempts: attempts,
                    initialBackoff: .milliseconds(1)
                ),
                clock: attemptClock
            )
        }
    }

    /// One key for the suite: RSA key generation is the costliest thing a test could do here.
    static let key = try! TestKeys.keyNow(projectID: "demo-project", name: "fleet-signer")

    func withGoogle(_ body: @escaping @Sendable (Google) async throws -> Void) async throws {
        let fake = FakeGoogleAuth(key: Self.key)
        try await Application(router: fake.router).test(.live) { client in
            // Calls the fake still holds are answered before its server stops, whatever the test did.
            defer { fake.releaseHeld() }
            let port = try #require(client.port)
            try await body(Google(fake: fake, base: "http://127.0.0.1:\(port)", host: "127.0.0.1:\(port)"))
        }
    }

    static func mint(_ signer: IAMCredentialsSigner) async throws -> FleetEngineToken {
        try await FleetEngineTokenMinter(signer: signer).mint(.driver(vehicleID: "v1"))
    }

    static func refusal(_ body: () async throws -> Void) async -> SigningError? {
        do {
            try await body()
            return nil
        } catch let error as SigningError {
            return error
        } catch {
            Issue.record("not a SigningError: \(error)")
            return nil
        }
    }

    @Test("a token signed through signJwt carries the claims sent, Google's kid, and verifies with the account's key")
    func signs() async throws {
        try await withGoogle { google in
            let token = try await Self.mint(google.signer())
            #expect(token.keyID == google.fake.key.privateKeyID)
            let verifier = FleetEngineTokenVerifier(trustStore: TrustStore(serviceAccountKeys: [google.fake.key]))
            let verified = try verifier.verify(token.jwt, now: Date())
            #expect(verified.claims == token.claims)
            #expect(google.fake.signRequests == 1)
        }
    }

    @Test("the metadata server's token is fetched once for 100 concurrent mints, which share a few connections")
    func sharedTokenAndConnections() async throws {
        try await withGoogle { google in
            let signer = google.signer()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<100 { group.addTask { _ = try await Self.mint(signer) } }
                try await group.waitForAll()
            }
            #expect(google.fake.tokenRequests == 1)
            #expect(google.fake.signRequests == 100)
            #expect(google.fake.signConnections <= 16, "\(google.fake.signConnections) connections")
        }
    }

    @Test("access tokens are reused until 5 minutes before they expire, then fetched again")
    func refreshMargin() async throws {
        try await withGoogle { google in
            let clock = ManualClock()
            let signer = google.signer(clock: clock)
            _ = try await Self.mint(signer)
            clock.advance(by: .seconds(3600 - 301))
            _ = try await Self.mint(signer)
            #expect(google.fake.tokenRequests == 1)
            clock.advance(by: .seconds(1))
            _ = try await Self.mint(signer)
            #expect(google.fake.tokenRequests == 2)
        }
    }

    @Test("a service-account key file gets its token by a JWT-bearer grant signed with its key")
    func serviceAccountGrant() async throws {
        try await withGoogle { google in
            var object = google.fake.key.jsonObject
            object["token_uri"] = .string(google.base + "/token")
            let credentials = try GoogleCredentials.json(JSONValue.object(object).jsonBytes, source: "test")
            _ = try await Self.mint(google.signer(credentials: credentials))
            let assertion = try #require(google.fake.lastAssertion)
            let claims = try CompactJWS(assertion).payloadObject()
            #expect(claims["aud"]?.stringValue == google.base + "/token")
            #expect(claims["scope"]?.stringValue == GoogleCredentials.cloudPlatformScope)
        }
    }

    @Test("an authorized-user file refreshes its token; an impersonated account gets its token from IAM")
    func userAndImpersonation() async throws {
        try await withGoogle { google in
            let user = GoogleCredentials.authorizedUser(
                clientID: "c",
                clientSecret: "s",
                refreshToken: google.fake.refreshToken,
                tokenURI: google.base + "/token"
            )
            _ = try await Self.mint(google.signer(credentials: user))
            let impersonated = GoogleCredentials.impersonated(
                source: user,
                url: "\(google.base)/v1/projects/-/serviceAccounts/\(google.fake.key.clientEmail):generateAccessToken",
                delegates: []
            )
            _ = try await Self.mint(google.signer(credentials: impersonated))
            #expect(google.fake.tokenRequests == 3)
            let refused = GoogleCredentials.authorizedUser(
                clientID: "c",
                clientSecret: "s",
                refreshToken: "revoked",
                tokenURI: google.base + "/token"
            )
            let error = await Self.refusal { _ = try await Self.mint(google.signer(credentials: refused)) }
            #expect(error?.code == .unauthenticated)
        }
    }

    @Test("403: permission_denied at once, naming the permission and the role to grant")
    func forbidden() async throws {
        try await withGoogle { google in
            google.fake.scriptSignFaults([.status(403)])
            let error = await Self.refusal { _ = try await Self.mint(google.signer()) }
            #expect(error?.code == .permissionDenied)
            #expect(error?.message.contains("iam.serviceAccounts.signJwt") == true)
            #expect(error?.message.contains("roles/iam.serviceAccountTokenCreator") == true)
            #expect(error?.message.contains(google.fake.key.clientEmail) == true)
            #expect(google.fake.signRequests == 1)
        }
    }

    @Test("429 and 5xx are retried with backoff; three failures in a row are unavailable")
    func retries() async throws {
        try await withGoogle { google in
            google.fake.scriptSignFaults([.status(429), .status(503)])
            _ = try await Self.mint(google.signer())
            #expect(google.fake.signRequests == 3)
            google.fake.scriptSignFaults([.status(503), .status(500), .status(502), .status(503)])
            let error = await Self.refusal { _ = try await Self.mint(google.signer()) }
            #expect(error?.code == .unavailable)
            #expect(error?.isTransient == true)
            #expect(google.fake.signRequests == 6)
        }
    }

    @Test("an answer slower than the try's deadline is abandoned and retried")
    func deadline() async throws {
        try await withGoogle { google in
            // Each try's deadline (4 s) and the backoff are measured on the signer's clock, which the test moves once
            // the fake holds a call: the held answer is late whatever the machine's speed, and the answer of a try
            // that is not held is in time however long it takes.
            let clock = ManualClock()
            let signer = google.signer(attemptClock: clock, attempts: 2, timeout: .seconds(4))
            // Moves the clock once the signer sleeps on it (one sleeper: a try's deadline, or the backoff after it)
            // and `ready` holds: never while a later try's deadline could be passed by mistake.
            func advance(by step: Duration, once what: String, _ ready: @escaping () -> Bool) async throws {
                try await Waiting.until(what) { clock.sleeperCount == 1 && ready() }
                clock.advance(by: step)
            }
            google.fake.scriptSignFaults([.held])
            let minted = Task { try await Self.mint(signer) }
            try await advance(by: .seconds(4), once: "the fake holds the first try") { google.fake.heldRequests == 1 }
            try await advance(by: .milliseconds(1), once: "the backoff after the first try") { true }
            let token = try await minted.value
            #expect(token.keyID == google.fake.key.privateKeyID)
            #expect(google.fake.signRequests == 2)

            google.fake.scriptSignFaults([.held, .held])
            let refused = Task { await Self.refusal { _ = try await Self.mint(signer) } }
            try await advance(by: .seconds(4), once: "the fake holds the first try") { google.fake.heldRequests == 2 }
            try await advance(by: .milliseconds(1), once: "the backoff after the first try") { true }
            try await advance(by: .seconds(4), once: "the fake holds the second try") { google.fake.heldRequests == 3 }
            let error = await refused.value
            #expect(error?.code == .unavailable)
            #expect(error?.message.contains("did not answer within 4.0 seconds") == true, "\(error?.message ?? "")")
            #expect(google.fake.signRequests == 4)
        }
    }

    @Test("malformed JSON, a missing signedJwt and claims that differ from those sent are refused, not retried")
    func badAnswers() async throws {
        try await withGoogle { google in
            for (fault, code) in [
                (FakeGoogleAuth.SignFault.malformed, SigningError.Code.invalidResponse),
                (.missingToken, .invalidResponse),
                (.mismatchedClaims, .claimsMismatch),
            ] {
                let before = google.fake.signRequests
                google.fake.scriptSignFaults([fault])
                let error = await Self.refusal { _ = try await Self.mint(google.signer()) }
                #expect(error?.code == code, "\(fault)")
                #expect(google.fake.signRequests == before + 1)
            }
        }
    }

    @Test("a 401 drops the access token and tries once more with a new one")
    func unauthorizedRefreshesOnce() async throws {
        try await withGoogle { google in
            let signer = google.signer()
            _ = try await Self.mint(signer)
            google.fake.revokeAccessTokens()
            _ = try await Self.mint(signer)
            #expect(google.fake.tokenRequests == 2)
            #expect(google.fake.signRequests == 3)
        }
    }

    @Test("the metadata server down: unavailable; back up: the next mint succeeds")
    func metadataDownThenUp() async throws {
        try await withGoogle { google in
            let signer = google.signer()
            google.fake.isMetadataAvailable = false
            let error = await Self.refusal { _ = try await Self.mint(signer) }
            #expect(error?.code == .unavailable)
            #expect(google.fake.signRequests == 0)
            google.fake.isMetadataAvailable = true
            _ = try await Self.mint(signer)
            #expect(google.fake.signRequests == 1)
        }
    }

    @Test("a metadata server nobody listens on is unavailable, quickly")
    func nobodyListening() async throws {
        // The HTTP client keeps trying a refused connection until the request's deadline: a short one ends the
        // wait, and the verdict is the same whichever ends it first.
        let signer = IAMCredentialsSigner(
            serviceAccountEmail: "sa@demo-project.iam.gserviceaccount.com",
            accessTokens: AccessTokenSource(credentials: .metadataServer(host: "127.0.0.1:1"), timeout: .seconds(1)),
            configuration: .init(baseURL: "http://127.0.0.1:1", maximumAttempts: 2, initialBackoff: .milliseconds(1))
        )
        let error = await Self.refusal { _ = try await Self.mint(signer) }
        #expect(error?.code == .unavailable)
    }
}
