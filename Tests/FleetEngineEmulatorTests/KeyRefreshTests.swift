import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Keys a fake JWK set endpoint serves, and how often it was asked.
final class PublishedKeys: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [RSAVerificationKey]
    private var fetches = 0
    init(_ keys: [RSAVerificationKey]) { self.keys = keys }
    func publish(_ keys: [RSAVerificationKey]) { lock.withLock { self.keys = keys } }
    func fetch() -> [RSAVerificationKey] {
        lock.withLock {
            fetches += 1
            return keys
        }
    }
    var fetchCount: Int { lock.withLock { fetches } }
}

/// The reasons an authenticator reported, in order.
final class RejectionLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ reason: String) { lock.withLock { stored.append(reason) } }
    var reasons: [String] {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

@Suite("Key rotation by JWK set URL")
struct KeyRefreshTests {
    static let oldKey = try! TestKeys.keyNow(projectID: "demo-project", name: "token-server")
    static let newKey = try! ServiceAccountKey(
        json: {
            var object = oldKey.jsonObject
            object["private_key_id"] = .string(String(repeating: "cd", count: 20))
            object["private_key"] = try! TestKeys.keyNow(projectID: "demo-project", name: "token-server")
                .jsonObject["private_key"]
            return JSONValue.object(object).jsonBytes
        }(),
        source: "rotated"
    )
    static let account = TrustedServiceAccount(
        email: oldKey.clientEmail,
        project: "demo-project",
        roles: [.driverSdkUser]
    )

    static func token(_ key: ServiceAccountKey) throws -> String {
        "Bearer "
            + (try FleetEngineTokenMinter(signer: LocalKeySigner(key: key)).mintSynchronously(.driver(vehicleID: "v1"))
                .jwt)
    }

    @Test("a new kid triggers one refetch; the new key then verifies; unknown kids are rate-limited")
    func rotation() async throws {
        let published = PublishedKeys([Self.oldKey.verificationKey])
        let authenticator = TokenAuthenticator(accounts: [(Self.account, [Self.oldKey.verificationKey])])
        let refresher = KeyRefresher(urls: [Self.account.email: "http://unused"], minimumInterval: .seconds(3600)) {
            _ in published.fetch()
        }

        _ = try await authenticator.authenticate(authorization: try Self.token(Self.oldKey), refresher: refresher)
        #expect(published.fetchCount == 0)

        // The token server rotates: publishes old + new, signs with new.
        published.publish([Self.oldKey.verificationKey, Self.newKey.verificationKey])
        let principal = try await authenticator.authenticate(
            authorization: try Self.token(Self.newKey),
            refresher: refresher
        )
        #expect(principal.token.keyID == Self.newKey.privateKeyID)
        #expect(published.fetchCount == 1)
        // Old tokens still verify while the old key is published.
        _ = try await authenticator.authenticate(authorization: try Self.token(Self.oldKey), refresher: refresher)

        // A made-up kid: the interval has not passed, so no second fetch, and a 401.
        let stranger = try ServiceAccountKey(
            json: {
                var object = Self.oldKey.jsonObject
                object["private_key_id"] = .string(String(repeating: "ef", count: 20))
                return JSONValue.object(object).jsonBytes
            }(),
            source: "stranger"
        )
        await expectCode(GoogleAPIError.unauthenticated("")) {
            try await authenticator.authenticate(authorization: try Self.token(stranger), refresher: refresher)
        }
        #expect(published.fetchCount == 1)
    }

    @Test("a forged signature under a known kid fetches nothing and is counted once")
    func forgedSignatureUnderKnownKid() async throws {
        let published = PublishedKeys([Self.oldKey.verificationKey])
        let rejections = RejectionLog()
        let authenticator = TokenAuthenticator(
            accounts: [(Self.account, [Self.oldKey.verificationKey])],
            cacheCapacity: 0,
            onRejection: { rejections.append($0) }
        )
        // No interval: only the kid rule can keep the refresher from fetching.
        let refresher = KeyRefresher(urls: [Self.account.email: "http://unused"], minimumInterval: .zero) { _ in
            published.fetch()
        }
        // The real kid, signed by another key: a forged signature.
        let forger = try ServiceAccountKey(
            json: {
                var object = Self.oldKey.jsonObject
                object["private_key"] = Self.newKey.jsonObject["private_key"]
                return JSONValue.object(object).jsonBytes
            }(),
            source: "forger"
        )
        for _ in 0..<3 {
            await expectCode(GoogleAPIError.unauthenticated("")) {
                try await authenticator.authenticate(authorization: try Self.token(forger), refresher: refresher)
            }
        }
        #expect(published.fetchCount == 0)
        #expect(rejections.reasons == Array(repeating: "invalid_signature", count: 3))
        // An unknown kid still refetches (and, still unknown after the fetch, is counted once).
        rejections.reasons = []
        await expectCode(GoogleAPIError.unauthenticated("")) {
            try await authenticator.authenticate(authorization: try Self.token(Self.newKey), refresher: refresher)
        }
        #expect(published.fetchCount == 1)
        #expect(rejections.reasons.count == 1)
    }

    @Test("JWK sets are fetched over HTTP from a live server")
    func fetchOverHTTP() async throws {
        let router = Router()
        let set = JSONValue.object(JSONWebKeySet([Self.oldKey.verificationKey]).jsonObject).jsonText
        router.get("jwk") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: set))
            )
        }
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await application.test(.live) { client in
            let keys = try await TrustConfiguration.fetchKeys(from: "http://127.0.0.1:\(client.port!)/jwk")
            #expect(keys.map(\.keyID) == [Self.oldKey.privateKeyID])
            await #expect(throws: TrustConfigurationError.self) {
                try await TrustConfiguration.fetchKeys(from: "http://127.0.0.1:\(client.port!)/missing")
            }
        }
    }
}
