import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineEmulator
import Foundation
import Testing

/// Thread-safe counter of rejection reasons.
final class ReasonLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reasons: [String] = []
    func record(_ reason: String) { lock.withLock { reasons.append(reason) } }
    var all: [String] { lock.withLock { reasons } }
}

@Suite("Token authentication")
struct AuthenticationTests {
    static let driverKey = try! TestKeys.keyNow(projectID: "demo-project", name: "driver")
    static let otherKey = try! TestKeys.keyNow(projectID: "demo-project", name: "untrusted")
    static let start: TimeInterval = 1_800_000_000
    static let driver = TrustedServiceAccount(
        email: driverKey.clientEmail,
        project: "demo-project",
        roles: [.driverSdkUser]
    )

    static func mint(_ type: FleetEngineTokenType, key: ServiceAccountKey = driverKey, at seconds: TimeInterval = start)
        throws -> String
    {
        try FleetEngineTokenMinter(signer: LocalKeySigner(key: key)).mintSynchronously(
            type,
            now: Date(timeIntervalSince1970: seconds)
        ).jwt
    }

    func authenticator(clock: ManualClock, log: ReasonLog, cache: Int = 100) -> TokenAuthenticator {
        TokenAuthenticator(
            accounts: [(Self.driver, [Self.driverKey.verificationKey])],
            cacheCapacity: cache,
            clock: clock,
            onRejection: { log.record($0) }
        )
    }

    @Test("a valid bearer token yields the signing account and its claims")
    func valid() throws {
        let clock = ManualClock(date: Date(timeIntervalSince1970: Self.start))
        let auth = authenticator(clock: clock, log: ReasonLog())
        let principal = try auth.authenticate(authorization: "Bearer " + Self.mint(.driver(vehicleID: "v1")))
        #expect(principal.account == Self.driver)
        #expect(principal.claims == AuthorizationClaims(vehicleID: "v1"))
        // The scheme is case-insensitive.
        #expect(throws: Never.self) {
            try auth.authenticate(authorization: "bearer " + Self.mint(.driver(vehicleID: "v1")))
        }
    }

    @Test("every token problem is the same 401 body; the reason goes to the rejection hook")
    func uniform401() throws {
        let clock = ManualClock(date: Date(timeIntervalSince1970: Self.start))
        let log = ReasonLog()
        let auth = authenticator(clock: clock, log: log)
        let good = try Self.mint(.driver(vehicleID: "v1"))
        let tampered = String(good.dropLast(4)) + (good.hasSuffix("AAAA") ? "BAAA" : "AAAA")
        let expired = try Self.mint(.driver(vehicleID: "v1"), at: Self.start - 7200)
        let untrusted = try Self.mint(.driver(vehicleID: "v1"), key: Self.otherKey)
        var messages = Set<String>()
        for header in ["Bearer " + tampered, "Bearer " + expired, "Bearer " + untrusted, "Bearer not.a.jwt"] {
            let error = expectCode(GoogleAPIError.unauthenticated("")) {
                try auth.authenticate(authorization: header)
            }
            messages.insert(error?.message ?? "")
        }
        #expect(messages == [TokenAuthenticator.invalidCredentialsMessage])
        #expect(log.all == ["invalid_signature", "expired", "unknown_issuer", "invalid_base64url"])
        for header in [nil, "", "Basic abc", "Bearer", "Bearer ", good] {
            let error = expectCode(GoogleAPIError.unauthenticated("")) {
                try auth.authenticate(authorization: header)
            }
            #expect(error?.message == TokenAuthenticator.missingCredentialsMessage)
        }
    }

    /// A genuine token of `key`, issued at `date` (``start`` by default), without an `authorization` claim.
    static func claimless(_ key: ServiceAccountKey, at date: Date = Date(timeIntervalSince1970: start)) throws -> String
    {
        let header = #"{"alg":"RS256","typ":"JWT","kid":"\#(key.privateKeyID)"}"#
        let now = Int64(date.timeIntervalSince1970)
        let payload =
            #"{"iss":"\#(key.clientEmail)","sub":"\#(key.clientEmail)","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"exp":\#(now + 3600)}"#
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return input + "." + Base64URL.encode(try LocalKeySigner(key: key).signSynchronously(Array(input.utf8)))
    }

    @Test("a genuine token without scopes is 403 'JWT does not contain any scopes.'")
    func noScopes() throws {
        let clock = ManualClock(date: Date(timeIntervalSince1970: Self.start))
        let auth = authenticator(clock: clock, log: ReasonLog())
        let error = expectCode(GoogleAPIError.permissionDenied("")) {
            try auth.authenticate(authorization: "Bearer " + Self.claimless(Self.driverKey))
        }
        #expect(error?.message == "JWT does not contain any scopes.")
    }

    @Test("an admin account's token needs no scopes: Fleet Engine ignores the claims of the admin roles")
    func adminWithoutScopes() throws {
        let clock = ManualClock(date: Date(timeIntervalSince1970: Self.start))
        for role in [FleetEngineRole.ondemandAdmin, .deliveryAdmin] {
            let admin = TrustedServiceAccount(email: Self.otherKey.clientEmail, project: "demo-project", roles: [role])
            let auth = TokenAuthenticator(
                accounts: [(Self.driver, [Self.driverKey.verificationKey]), (admin, [Self.otherKey.verificationKey])],
                clock: clock
            )
            let principal = try auth.authenticate(authorization: "Bearer " + Self.claimless(Self.otherKey))
            #expect(principal.account == admin)
            #expect(principal.claims.isEmpty)
            // The other account of the same emulator still needs scopes.
            expectCode(GoogleAPIError.permissionDenied("")) {
                try auth.authenticate(authorization: "Bearer " + Self.claimless(Self.driverKey))
            }
        }
    }

    @Test("cached tokens still expire exactly at exp, and a key change empties the cache")
    func cacheHonoursExpiryAndRotation() throws {
        let clock = ManualClock(date: Date(timeIntervalSince1970: Self.start))
        let log = ReasonLog()
        let auth = authenticator(clock: clock, log: log)
        let header = "Bearer " + (try Self.mint(.driver(vehicleID: "v1")))
        for _ in 0..<3 { _ = try auth.authenticate(authorization: header) }
        clock.advance(by: .seconds(3599))
        #expect(throws: Never.self) { try auth.authenticate(authorization: header) }
        clock.advance(by: .seconds(1))
        expectCode(GoogleAPIError.unauthenticated("")) { try auth.authenticate(authorization: header) }
        #expect(log.all == ["expired"])

        let fresh = "Bearer " + (try Self.mint(.driver(vehicleID: "v1"), at: Self.start + 3600))
        #expect(throws: Never.self) { try auth.authenticate(authorization: fresh) }
        auth.replaceKeys([Self.otherKey.verificationKey], for: Self.driver.email)
        expectCode(GoogleAPIError.unauthenticated("")) { try auth.authenticate(authorization: fresh) }
        #expect(log.all.last == "unknown_kid")
    }

    @Test("forged tokens are never cached")
    func forgedNotCached() throws {
        let clock = ManualClock(date: Date(timeIntervalSince1970: Self.start))
        let auth = authenticator(clock: clock, log: ReasonLog())
        for index in 0..<50 {
            let forged = try Self.mint(.driver(vehicleID: "v\(index)"), key: Self.otherKey)
            _ = try? auth.authenticate(authorization: "Bearer " + forged)
        }
        _ = try auth.authenticate(authorization: "Bearer " + Self.mint(.driver(vehicleID: "v1")))
        #expect(auth.cachedTokenCount == 1)
    }
}

@Suite("Trust configuration")
struct TrustConfigurationTests {
    static func parse(_ text: String) throws(TrustConfigurationError) -> TrustConfiguration {
        try TrustConfiguration(json: Array(text.utf8), source: "trust.json", baseDirectory: "/etc/fleet")
    }

    @Test("reads accounts with one key source each; relative paths resolve against the trust file")
    func reads() throws {
        let config = try Self.parse(
            #"{"serviceAccounts":[{"email":"d@p.iam.gserviceaccount.com","project":"p","roles":["roles/fleetengine.driverSdkUser"],"keyFile":"d.json"},{"email":"s@p.iam.gserviceaccount.com","project":"p","roles":["serviceSuperUser","roles/fleetengine.viewer"],"jwksURL":"http://127.0.0.1:8788/keys"}]}"#
        )
        #expect(config.serviceAccounts.count == 2)
        #expect(config.serviceAccounts[0].keySource == .keyFile("/etc/fleet/d.json"))
        #expect(config.serviceAccounts[0].account.roles == [.driverSdkUser])
        #expect(config.serviceAccounts[1].keySource.isURL)
        #expect(config.serviceAccounts[1].account.roles == [.serviceSuperUser, .viewer])
    }

    @Test(
        "mistakes are errors that name the entry",
        arguments: [
            (#"[]"#, "not a strict JSON object"),
            (#"{"accounts":[]}"#, "unknown member \"accounts\""),
            (#"{"serviceAccounts":{}}"#, "must be an array"),
            (
                #"{"serviceAccounts":[{"email":"a@b","project":"p","roles":["roles/fleetengine.pilot"],"keyFile":"k"}]}"#,
                "serviceAccounts[0].roles"
            ),
            (#"{"serviceAccounts":[{"email":"a@b","project":"p","roles":[],"keyFile":"k"}]}"#, "non-empty array"),
            (#"{"serviceAccounts":[{"email":"a@b","project":"p","roles":["viewer"]}]}"#, "exactly one of"),
            (
                #"{"serviceAccounts":[{"email":"a@b","project":"p","roles":["viewer"],"keyFile":"k","jwks":"j"}]}"#,
                "exactly one of"
            ),
            (#"{"serviceAccounts":[{"email":"a@b","roles":["viewer"],"keyFile":"k"}]}"#, "needs \"project\""),
            (
                #"{"serviceAccounts":[{"email":"a@b","project":"p","roles":["viewer"],"keyFile":"k","role":"x"}]}"#,
                "unknown member \"role\""
            ),
            (
                #"{"serviceAccounts":[{"email":"a@b","project":"p","roles":["viewer"],"keyFile":"k"},{"email":"a@b","project":"p","roles":["viewer"],"keyFile":"k"}]}"#,
                "listed twice"
            ),
        ]
    )
    func mistakes(_ text: String, _ phrase: String) {
        let error = #expect(throws: TrustConfigurationError.self) { try Self.parse(text) }
        #expect(error?.message.contains(phrase) == true, "\(error?.message ?? "")")
        #expect(error?.message.hasPrefix("trust.json") == true)
    }
}
