import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineEmulator
import FleetTokenServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ServiceLifecycle
import Testing

@Suite("Token server: keys, rotation and the emulator", .temporaryResources)
struct KeysTests {
    static func keyIDs(_ object: JSONObject) -> [String] {
        (object["keys"]?.arrayValue ?? []).compactMap { $0.objectValue?["kid"]?.stringValue }
    }

    @Test("rotation: new tokens use the new key; the old key stays published until its tokens expire, then goes")
    func rotation() async throws {
        let fixture = try await TokenServerFixture()
        let keyring = fixture.server.keyring
        let old = try keyring.signingKey(for: .driver)
        let jwks = "/service_accounts/v1/metadata/jwk/\(old.email)"
        try await fixture.application.test(.router) { client in
            let session = try await client.login("dana")
            let (_, before, _) = try await client.json(.get, "/token/driver/v1", bearer: session)
            let oldToken = try #require(before["jwt"]?.stringValue)
            #expect(Self.keyIDs(try await client.json(.get, jwks).1) == [old.record.kid])

            let rotated = try await keyring.rotate(.driver)
            #expect(rotated.kid != old.record.kid)
            let (_, after, _) = try await client.json(.get, "/token/driver/v1", bearer: session)
            let newToken = try #require(after["jwt"]?.stringValue)
            #expect(try CompactJWS(newToken).header["kid"]?.stringValue == rotated.kid)
            let (status, published, headers) = try await client.json(.get, jwks)
            #expect(status == .ok && headers[.cacheControl] == "public, max-age=60")
            #expect(Set(Self.keyIDs(published)) == [old.record.kid, rotated.kid])
            // Both tokens verify against the published set.
            let keys = try JSONWebKeySet(json: published.jsonBytes).verificationKeys()
            var trust = TrustStore()
            trust.add(keys, issuer: old.email)
            let verifier = FleetEngineTokenVerifier(trustStore: trust)
            _ = try verifier.verify(oldToken, now: fixture.clock.currentDate)
            _ = try verifier.verify(newToken, now: fixture.clock.currentDate)

            // Once every token the old key signed has expired, it is no longer published, and pruning removes it.
            fixture.clock.advance(by: keyring.publicationWindow - .seconds(1))
            #expect(Set(Self.keyIDs(try await client.json(.get, jwks).1)).count == 2)
            fixture.clock.advance(by: .seconds(1))
            #expect(Self.keyIDs(try await client.json(.get, jwks).1) == [rotated.kid])
            #expect(try await keyring.prune() == [old.record.kid])
            #expect(!FileManager.default.fileExists(atPath: try #require(old.record.material.path)))
            #expect(try await client.json(.get, "/service_accounts/v1/metadata/jwk/nobody@x").0 == .notFound)
        }
    }

    @Test("keys survive a restart; a rotation by another process reaches a running server")
    func restartAndExternalRotation() async throws {
        let fixture = try await TokenServerFixture()
        let before = try fixture.server.keyring.signingKey(for: .consumer).record.kid
        let reopened = try await TokenServerFixture.open(
            fixture.directory,
            store: try SQLiteTokenServerStore(path: fixture.directory + "/" + TokenServer.databaseFileName),
            clock: fixture.clock
        )
        #expect(try reopened.keyring.signingKey(for: .consumer).record.kid == before)
        let rotated = try await reopened.keyring.rotate(.consumer)
        // The first server notices within its refresh interval.
        fixture.clock.advance(by: fixture.server.keyring.refreshInterval)
        try await fixture.server.keyring.refreshIfStale()
        #expect(try fixture.server.keyring.signingKey(for: .consumer).record.kid == rotated.kid)
    }

    @Test("the emulator trusting the token server's JWKS URLs accepts its tokens, before and after a rotation")
    func emulatorAcceptsTokens() async throws {
        let fixture = try await TokenServerFixture()
        var logger = Logger(label: "interop")
        logger.logLevel = .critical
        let ports = AsyncStream.makeStream(of: Int.self)
        let application = fixture.server.application(port: 0, logger: logger) { ports.continuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await Self.exercise(fixture, baseURL: "http://127.0.0.1:\(port)")
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    static func exercise(_ fixture: TokenServerFixture, baseURL: String) async throws {
        // The trust file the running server wrote for its address, read back as the emulator reads it.
        let trustPath = fixture.directory + "/" + TokenServer.trustFileName
        let trust = try TrustConfiguration(contentsOf: trustPath)
        #expect(trust == fixture.server.keyring.trustConfiguration(baseURL: baseURL))
        let emulator = try await EmulatorServer(trust: trust, store: try SQLiteFleetStore(inMemory: ()))
        let emulatorRouter = Unchecked(value: emulator.router)
        let tokenServer = Application(router: fixture.server.router)
        try await tokenServer.test(.router) { tokens in
            let ops = try await tokens.login("ops")
            let driver = try await tokens.login("dana")
            @Sendable func token(_ path: String, _ session: String) async throws -> String {
                try #require(try await tokens.json(.get, path, bearer: session).1["jwt"]?.stringValue)
            }
            let server = try await token("/token/server", ops)
            let before = try await token("/token/driver/v1", driver)
            try await Application(router: emulatorRouter.value).test(.router) { fleet in
                let vehicles = "/v1/providers/demo-project/vehicles"
                let create = try await fleet.json(
                    .post,
                    "\(vehicles)?vehicleId=v1",
                    bearer: server,
                    body:
                        #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#
                )
                #expect(create.0 == .ok, "\(create.1.jsonText)")
                let move = #"{"lastLocation":{"location":{"latitude":37.4,"longitude":-122.1}}}"#
                #expect(
                    try await fleet.json(.put, "\(vehicles)/v1?updateMask=last_location", bearer: before, body: move).0
                        == .ok
                )
                // A driver token cannot touch another vehicle, as Fleet Engine would refuse it.
                #expect(try await fleet.json(.get, "\(vehicles)/v2", bearer: before).0 == .forbidden)

                // Rotate: the emulator fetches the new key when it first sees its kid; the old token still works.
                try await fixture.server.keyring.rotate(.driver)
                let after = try await token("/token/driver/v1", driver)
                #expect(
                    try await fleet.json(.put, "\(vehicles)/v1?updateMask=last_location", bearer: after, body: move).0
                        == .ok
                )
                #expect(try await fleet.json(.get, "\(vehicles)/v1", bearer: before).0 == .ok)
            }
        }
    }
}

@Suite("Token server: admin API", .temporaryResources)
struct AdminTests {
    @Test("operators manage users and grants; other users get 403; mistakes are 400/404/409")
    func admin() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let ops = try await client.login("ops")
            let created = try await client.json(
                .post,
                "/v1/admin/users",
                bearer: ops,
                body: #"{"username":"eve","password":"long enough pw","role":"driver"}"#
            )
            #expect(created.0 == .created)
            #expect(
                try await client.json(
                    .post,
                    "/v1/admin/users",
                    bearer: ops,
                    body: #"{"username":"eve","password":"long enough pw","role":"driver"}"#
                ).0 == .conflict
            )
            for body in [
                #"{"username":"Eve!","password":"long enough pw","role":"driver"}"#,
                #"{"username":"frank","password":"short","role":"driver"}"#,
                #"{"username":"frank","password":"long enough pw","role":"pilot"}"#,
            ] {
                #expect(try await client.json(.post, "/v1/admin/users", bearer: ops, body: body).0 == .badRequest)
            }
            #expect(
                try await client.json(
                    .post,
                    "/v1/admin/users/eve/grants",
                    bearer: ops,
                    body: #"{"kind":"vehicle","id":"v9"}"#
                ).0 == .created
            )
            #expect(
                try await client.json(
                    .post,
                    "/v1/admin/users/eve/grants",
                    bearer: ops,
                    body: #"{"kind":"trip","id":"t9"}"#
                ).0 == .badRequest
            )
            #expect(
                try await client.json(
                    .post,
                    "/v1/admin/users/nobody/grants",
                    bearer: ops,
                    body: #"{"kind":"vehicle","id":"v9"}"#
                ).0 == .notFound
            )
            let eve = try await client.login("eve", "long enough pw")
            #expect(try await client.json(.get, "/token/driver/v9", bearer: eve).0 == .ok)
            let (_, list, _) = try await client.json(.get, "/v1/admin/users", bearer: ops)
            let names = (list["users"]?.arrayValue ?? []).compactMap { $0.objectValue?["username"]?.stringValue }
            #expect(names == ["carol", "cody", "dana", "dave", "eve", "ops"])

            #expect(
                try await client.json(.delete, "/v1/admin/users/eve/grants/vehicle/v9", bearer: ops).0 == .noContent
            )
            #expect(try await client.json(.get, "/token/driver/v9", bearer: eve).0 == .forbidden)
            #expect(try await client.json(.delete, "/v1/admin/users/eve/grants/vehicle/v9", bearer: ops).0 == .notFound)
            #expect(try await client.json(.delete, "/v1/admin/users/eve", bearer: ops).0 == .noContent)
            #expect(try await client.json(.get, "/token/driver/v9", bearer: eve).0 == .unauthorized)
            #expect(try await client.json(.delete, "/v1/admin/users/ops", bearer: ops).0 == .badRequest)

            let rotated = try await client.json(.post, "/v1/admin/keys/driver/rotate", bearer: ops)
            let currentKid = try fixture.server.keyring.signingKey(for: .driver).record.kid
            #expect(rotated.0 == .ok)
            #expect(rotated.1["kid"]?.stringValue == currentKid)
            #expect(try await client.json(.post, "/v1/admin/keys/pilot/rotate", bearer: ops).0 == .notFound)

            let driver = try await client.login("dana")
            for (method, path) in [
                (HTTPRequest.Method.get, "/v1/admin/users"), (.get, "/v1/admin/audit"),
                (.post, "/v1/admin/keys/driver/rotate"), (.delete, "/v1/admin/users/dave"),
            ] {
                #expect(try await client.json(method, path, bearer: driver).0 == .forbidden, "\(path)")
                #expect(try await client.json(method, path).0 == .unauthorized, "\(path)")
            }
        }
    }
}

@Suite("Token server: service accounts", .temporaryResources)
struct ServiceAccountTests {
    @Test("a service key grants and revokes and does nothing else; it cannot log in; removing the account revokes it")
    func serviceKey() async throws {
        let fixture = try await TokenServerFixture()
        let key = try await fixture.server.users.addServiceAccount("dispatch")
        #expect(key.hasPrefix(UserDirectory.serviceKeyPrefix) && key.utf8.count == 18 + 43)
        #expect(try await fixture.store.sessionUser(tokenHash: key, at: Date(), holding: nil) == nil, "hash only")
        await expectCode(StoreError.alreadyExists("")) {
            _ = try await fixture.server.users.addServiceAccount("dispatch")
        }
        try await fixture.application.test(.router) { client in
            let grant = #"{"kind":"trip","id":"t9"}"#
            #expect(
                try await client.json(.post, "/v1/admin/users/carol/grants", bearer: key, body: grant).0 == .created
            )
            let carol = try await client.login("carol")
            #expect(try await client.json(.get, "/token/consumer/t9", bearer: carol).0 == .ok)
            #expect(
                try await client.json(.delete, "/v1/admin/users/carol/grants/trip/t9", bearer: key).0 == .noContent
            )
            #expect(try await client.json(.get, "/token/consumer/t9", bearer: carol).0 == .forbidden)
            // Nothing but grants: no other admin call, no token.
            let others: [(HTTPRequest.Method, String, String?)] = [
                (.get, "/v1/admin/users", nil),
                (.post, "/v1/admin/users", #"{"username":"x1","role":"operator","password":"long enough pw"}"#),
                (.delete, "/v1/admin/users/carol", nil), (.post, "/v1/admin/keys/driver/rotate", nil),
                (.get, "/v1/admin/audit", nil), (.get, "/token/server", nil), (.get, "/token/fleet_reader", nil),
                (.get, "/token/driver/v1", nil), (.get, "/token/consumer/t1", nil),
            ]
            for (method, path, body) in others {
                #expect(try await client.json(method, path, bearer: key, body: body).0 == .forbidden, "\(path)")
            }
            #expect(try await fixture.store.users().contains { $0.user.username == "x1" } == false)
            // No password login, and no service account made with a password.
            let attempt = #"{"username":"dispatch","password":"anything at all"}"#
            #expect(try await client.json(.post, "/v1/sessions", body: attempt).0 == .unauthorized)
            let ops = try await client.login("ops")
            let withPassword = #"{"username":"svc2","role":"service","password":"long enough pw"}"#
            #expect(try await client.json(.post, "/v1/admin/users", bearer: ops, body: withPassword).0 == .badRequest)
            // Removing the account revokes the key.
            #expect(try await client.json(.delete, "/v1/admin/users/dispatch", bearer: ops).0 == .noContent)
            #expect(
                try await client.json(.post, "/v1/admin/users/carol/grants", bearer: key, body: grant).0
                    == .unauthorized
            )
        }
    }
}
