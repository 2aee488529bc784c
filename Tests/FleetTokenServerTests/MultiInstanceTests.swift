import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Two token servers on one store (two processes on one SQLite file, or two instances on one PostgreSQL), each
/// with its own data directory, as two machines behind a load balancer would be.
struct TwoTokenServers: @unchecked Sendable {
    let a: TokenServer
    let b: TokenServer
    let storeA: any TokenServerStorage
    let directories: [String]
    let clock: ManualClock
    let reopen: @Sendable () async throws -> any TokenServerStorage

    static func start(_ driver: TokenServerStoreDriver, keyEncryptionKey: KeyEncryptionKey) async throws
        -> TwoTokenServers
    {
        let (storeA, another) = try await driver.open()
        let reopen = try #require(another)
        let storeB = try await reopen()
        let clock = ManualClock()
        let directories = try (0..<2).map { _ in try TestResources.required().temporaryDirectory("ts-instance") }
        @Sendable func open(_ store: any TokenServerStorage, _ directory: String) async throws -> TokenServer {
            try await TokenServer(
                configuration: .init(dataDirectory: directory, keyEncryptionKey: keyEncryptionKey, bcryptCost: 4),
                store: store,
                clock: clock,
                keyGenerator: TestKeys.generator
            )
        }
        // Both start at once: they must agree on one first key per family.
        async let a = open(storeA, directories[0])
        async let b = open(storeB, directories[1])
        let servers = try await (a, b)
        try await servers.0.users.addUser(
            AppUser(username: "dana", role: .driver),
            password: TokenServerFixture.password
        )
        try await servers.0.users.grant(Grant(kind: .vehicle, id: "v1"), to: "dana")
        return TwoTokenServers(
            a: servers.0,
            b: servers.1,
            storeA: storeA,
            directories: directories,
            clock: clock,
            reopen: reopen
        )
    }

    /// Runs `body` with a test client for each instance.
    func test(_ body: @escaping @Sendable (any TestClientProtocol, any TestClientProtocol) async throws -> Void)
        async throws
    {
        let b = Application(router: self.b.router)
        try await Application(router: a.router).test(.router) { clientA in
            try await b.test(.router) { clientB in try await body(clientA, clientB) }
        }
    }
}

@Suite("Token server: several instances on one store", .temporaryResources)
struct MultiInstanceTests {
    static let kek = KeyEncryptionKey.generate()

    static func header(_ jwt: String) throws -> JSONObject {
        try StrictJSONParser().parseObject(try #require(Base64URL.decode(String(jwt.split(separator: ".")[0]))))
    }

    @Test(
        "keys: agreed at a joint start, sealed in the store, never on disk; a rotation through one instance signs and is published on the other within a second",
        arguments: TokenServerStoreDriver.persistent
    )
    func keys(_ driver: TokenServerStoreDriver) async throws {
        let servers = try await TwoTokenServers.start(driver, keyEncryptionKey: Self.kek)
        let records = try await servers.storeA.signingKeys()
        #expect(records.count == TokenFamily.allCases.count)
        #expect(records.allSatisfy { if case .sealed = $0.material { true } else { false } })
        for directory in servers.directories {
            #expect(!FileManager.default.fileExists(atPath: directory + "/keys"), "no key file is written")
        }
        for family in TokenFamily.allCases {
            #expect(
                try servers.a.keyring.signingKey(for: family).record == servers.b.keyring.signingKey(for: family).record
            )
        }
        try await servers.test { a, b in
            let sessionA = try await a.login("dana")
            // A session made on one instance is good on the other.
            let (status, body, _) = try await b.json(.get, "/token/driver/v1", bearer: sessionA)
            #expect(status == .ok)
            let before = try servers.a.keyring.signingKey(for: .driver)
            #expect(try Self.header(try #require(body["jwt"]?.stringValue))["kid"]?.stringValue == before.record.kid)

            let rotated = try await servers.a.keyring.rotate(.driver)
            servers.clock.advance(by: servers.b.keyring.refreshInterval)
            let jwt = try #require(try await b.json(.get, "/token/driver/v1", bearer: sessionA).1["jwt"]?.stringValue)
            #expect(try Self.header(jwt)["kid"]?.stringValue == rotated.kid)
            let jwks = "/service_accounts/v1/metadata/jwk/\(before.email)"
            let published = try await b.json(.get, jwks).1["keys"]?.arrayValue?.compactMap {
                $0.objectValue?["kid"]?.stringValue
            }
            #expect(Set(published ?? []) == [before.record.kid, rotated.kid])
            // The token verifies with the key set the other instance publishes.
            let keySet = try JSONWebKeySet(json: JSONValue.object(try await b.json(.get, jwks).1).jsonBytes)
            var trust = TrustStore()
            trust.add(try keySet.verificationKeys(), issuer: before.email)
            _ = try FleetEngineTokenVerifier(trustStore: trust).verify(jwt, now: servers.clock.currentDate)

            // Once its tokens have expired, the old key is pruned by exactly one instance.
            servers.clock.advance(by: servers.a.keyring.publicationWindow)
            async let prunedA = servers.a.keyring.prune()
            async let prunedB = servers.b.keyring.prune()
            let pruned = try await prunedA + prunedB
            #expect(pruned == [before.record.kid])
        }
    }

    @Test(
        "sessions, logouts and lockouts are shared: a lockout made through one instance holds on the other and after a restart",
        arguments: TokenServerStoreDriver.persistent
    )
    func sessionsAndLockouts(_ driver: TokenServerStoreDriver) async throws {
        let servers = try await TwoTokenServers.start(driver, keyEncryptionKey: Self.kek)
        try await servers.test { a, b in
            let session = try await a.login("dana")
            #expect(try await b.json(.delete, "/v1/sessions/current", bearer: session).0 == .noContent)
            #expect(try await a.json(.get, "/token/driver/v1", bearer: session).0 == .unauthorized)

            let wrong = #"{"username":"dana","password":"wrong password"}"#
            for index in 0..<5 {
                let client = index.isMultiple(of: 2) ? a : b
                #expect(try await client.json(.post, "/v1/sessions", body: wrong).0 == .unauthorized)
            }
            let right = #"{"username":"dana","password":"\#(TokenServerFixture.password)"}"#
            #expect(try await a.json(.post, "/v1/sessions", body: right).0 == .tooManyRequests)
            #expect(try await b.json(.post, "/v1/sessions", body: right).0 == .tooManyRequests)
        }
        // A restarted instance (a new store and server on the same database) still refuses.
        let restarted = try await TokenServer(
            configuration: .init(dataDirectory: servers.directories[0], keyEncryptionKey: Self.kek, bcryptCost: 4),
            store: try await servers.reopen(),
            clock: servers.clock
        )
        await #expect(throws: GoogleAPIError.self) {
            _ = try await restarted.login.login(username: "dana", password: TokenServerFixture.password, address: nil)
        }
        servers.clock.advance(by: .seconds(30))
        _ = try await restarted.login.login(username: "dana", password: TokenServerFixture.password, address: nil)
    }

    @Test(
        "a wrong key-encryption key, or none, is a clear error at start, not at the first token",
        arguments: TokenServerStoreDriver.persistent
    )
    func wrongKeyEncryptionKey(_ driver: TokenServerStoreDriver) async throws {
        let servers = try await TwoTokenServers.start(driver, keyEncryptionKey: Self.kek)
        let directory = try TestResources.required().temporaryDirectory("ts-wrong")
        do {
            _ = try await TokenServer(
                configuration: .init(dataDirectory: directory, keyEncryptionKey: .generate()),
                store: try await servers.reopen()
            )
            Issue.record("a wrong key-encryption key was accepted")
        } catch let error as KeyEncryptionKeyError {
            #expect(error.message.contains("does not open signing key"))
        }
        do {
            _ = try await TokenServer(configuration: .init(dataDirectory: directory), store: try await servers.reopen())
            Issue.record("sealed keys were opened without a key-encryption key")
        } catch let error as KeyEncryptionKeyError {
            #expect(error.message.contains("sealed in the database"))
            #expect(error.message.contains(KeyEncryptionKey.environmentVariable))
        }
        // Nothing was changed by the refused starts.
        #expect(try await servers.storeA.signingKeys().count == TokenFamily.allCases.count)
    }
}

@Suite("Key-encryption key", .temporaryResources)
struct KeyEncryptionKeyTests {
    @Test("32 bytes in base64, written once with mode 0600; anything else is refused with the reason")
    func format() throws {
        let key = KeyEncryptionKey.generate()
        #expect(Data(base64Encoded: key.base64)?.count == 32)
        #expect(try KeyEncryptionKey(base64: "  \(key.base64)\n") == key)
        #expect(key != KeyEncryptionKey.generate())
        #expect(throws: KeyEncryptionKeyError.self) { try KeyEncryptionKey(base64: "not base64!") }
        do {
            _ = try KeyEncryptionKey(base64: Data(count: 16).base64EncodedString())
            Issue.record("a 16-byte key was accepted")
        } catch {
            #expect(error.message.contains("16 bytes"))
        }
        let path = try TestResources.required().temporaryDirectory("kek") + "/kek"
        try key.write(to: path)
        #expect(try KeyEncryptionKey(contentsOf: path) == key)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        #expect(throws: KeyEncryptionKeyError.self) { try KeyEncryptionKey.generate().write(to: path) }
        #expect(try KeyEncryptionKey(contentsOf: path) == key, "never overwritten")
        #expect(throws: KeyEncryptionKeyError.self) { try KeyEncryptionKey(contentsOf: path + "-missing") }
    }

    @Test("sealed keys open only with the same key and key ID, and only unaltered")
    func sealing() throws {
        let key = KeyEncryptionKey.generate()
        let plaintext = Array(#"{"type":"service_account"}"#.utf8)
        let sealed = try key.seal(plaintext, keyID: "k1")
        #expect(sealed.count == 1 + 12 + plaintext.count + 16)
        #expect(!sealed.contains(subsequence: plaintext))
        #expect(try key.unseal(sealed, keyID: "k1") == plaintext)
        #expect(try key.seal(plaintext, keyID: "k1") != sealed, "a fresh nonce each time")
        #expect(throws: KeyEncryptionKeyError.self) { try key.unseal(sealed, keyID: "k2") }
        #expect(throws: KeyEncryptionKeyError.self) { try KeyEncryptionKey.generate().unseal(sealed, keyID: "k1") }
        var altered = sealed
        altered[20] ^= 1
        #expect(throws: KeyEncryptionKeyError.self) { try key.unseal(altered, keyID: "k1") }
        #expect(throws: KeyEncryptionKeyError.self) { try key.unseal([2] + sealed.dropFirst(), keyID: "k1") }
        #expect(throws: KeyEncryptionKeyError.self) { try key.unseal([1, 2, 3], keyID: "k1") }
    }
}

extension Array where Element: Equatable {
    func contains(subsequence: [Element]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return subsequence.isEmpty }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
