import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// A token server on a temporary data directory with a fast bcrypt cost, an operator, two drivers and two
/// consumers with grants. (Unchecked: the router is built once, before any test code shares it.)
struct TokenServerFixture: @unchecked Sendable {
    static let password = "correct horse battery"
    let directory: String
    let store: SQLiteTokenServerStore
    let server: TokenServer
    /// The server's clock: a test moves it, the server never reads the system's.
    let clock: ManualClock

    init(auditLogger: Logger = Logger(label: "audit")) async throws {
        directory = try TestResources.required().temporaryDirectory("ts")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        clock = ManualClock()
        store = try SQLiteTokenServerStore(path: directory + "/" + TokenServer.databaseFileName)
        server = try await Self.open(directory, store: store, clock: clock, auditLogger: auditLogger)
        for (name, role) in [
            ("ops", AppUserRole.operator), ("dana", .driver), ("dave", .driver), ("carol", .consumer),
            ("cody", .consumer),
        ] {
            try await server.users.addUser(AppUser(username: name, role: role), password: Self.password)
        }
        try await server.users.grant(Grant(kind: .vehicle, id: "v1"), to: "dana")
        try await server.users.grant(Grant(kind: .deliveryVehicle, id: "dv1"), to: "dana")
        try await server.users.grant(Grant(kind: .vehicle, id: "v2"), to: "dave")
        try await server.users.grant(Grant(kind: .trip, id: "t1"), to: "carol")
        try await server.users.grant(Grant(kind: .tracking, id: "track-1"), to: "carol")
        try await server.users.grant(Grant(kind: .trip, id: "t2"), to: "cody")
    }

    /// A token server on `directory`'s data (as a second process would open it).
    static func open(
        _ directory: String,
        store: SQLiteTokenServerStore,
        clock: ManualClock,
        auditLogger: Logger = Logger(label: "audit")
    ) async throws -> TokenServer {
        try await TokenServer(
            configuration: .init(dataDirectory: directory, bcryptCost: 4),
            store: store,
            clock: clock,
            keyGenerator: TestKeys.generator,
            auditLogger: auditLogger
        )
    }

    var application: some ApplicationProtocol { Application(router: server.router) }
}

extension TestClientProtocol {
    /// A JSON request; returns the status, the parsed body (empty when none) and the headers.
    func json(_ method: HTTPRequest.Method, _ uri: String, bearer: String? = nil, body: String? = nil) async throws
        -> (HTTPResponse.Status, JSONObject, HTTPFields)
    {
        var headers = HTTPFields()
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        if body != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        { response in
            let bytes = Array(response.body.readableBytesView)
            let object = bytes.isEmpty ? JSONObject() : (try? StrictJSONParser().parseObject(bytes)) ?? JSONObject()
            return (response.status, object, response.headers)
        }
    }

    /// Logs in; returns the session token.
    func login(_ username: String, _ password: String = TokenServerFixture.password) async throws -> String {
        let (status, body, _) = try await json(
            .post,
            "/v1/sessions",
            body: #"{"username":"\#(username)","password":"\#(password)"}"#
        )
        try #require(status == .created, "login \(username): \(body.jsonText)")
        return try #require(body["sessionToken"]?.stringValue)
    }
}

@Suite("Token server: login and sessions", .temporaryResources)
struct LoginTests {
    @Test("login returns an opaque session stored only as a hash; logout ends it")
    func loginLogout() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let (status, body, headers) = try await client.json(
                .post,
                "/v1/sessions",
                body: #"{"username":"dana","password":"correct horse battery"}"#
            )
            #expect(status == .created)
            #expect(headers[.cacheControl] == "no-store")
            let session = try #require(body["sessionToken"]?.stringValue)
            #expect(session.utf8.count == 43 && Base64URL.decode(session)?.count == 32)
            #expect(body["role"] == "driver" && body["username"] == "dana")
            #expect((body["expiresAt"]?.integerValue ?? 0) > fixture.clock.currentEpochSeconds * 1000)
            // Only the hash is stored.
            let past = Date(epochSeconds: 0)
            #expect(try await fixture.store.sessionUser(tokenHash: session, at: past, holding: nil) == nil)
            #expect(
                try await fixture.store.sessionUser(
                    tokenHash: LoginService.hash(sessionToken: session),
                    at: past,
                    holding: nil
                )?.user
                    == AppUser(username: "dana", role: .driver)
            )

            #expect(try await client.json(.get, "/token/driver/v1", bearer: session).0 == .ok)
            #expect(try await client.json(.delete, "/v1/sessions/current", bearer: session).0 == .noContent)
            #expect(try await client.json(.get, "/token/driver/v1", bearer: session).0 == .unauthorized)
        }
    }

    @Test("the session goes in a Bearer credential: any case of the scheme, blanks around it ignored; else 401")
    func bearerForms() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let session = try await client.login("dana")
            func status(_ authorization: String?, _ path: String = "/token/driver/v1") async throws
                -> HTTPResponse.Status
            {
                var headers = HTTPFields()
                if let authorization { headers[.authorization] = authorization }
                return try await client.execute(uri: path, method: .get, headers: headers) { $0.status }
            }
            for accepted in ["Bearer \(session)", "bearer \(session)", "BEARER \(session)", "bEaReR  \(session) \t"] {
                #expect(try await status(accepted) == .ok, "\(accepted)")
            }
            // A percent-encoded ID is the ID it encodes (v1).
            #expect(try await status("Bearer \(session)", "/token/driver/%76%31") == .ok)
            for refused in [
                nil, "", "Bearer", "Bearer ", "Bearer  \t ", "Basic \(session)", "Bearer\(session)",
                "Bearer\t\(session)", "Bearer \(session)x", "Bearer \(session.dropLast())", "Bearer x \(session)",
            ] {
                #expect(try await status(refused) == .unauthorized, "\(refused ?? "no header")")
            }
        }
    }

    @Test("a wrong password and an unknown user get the same 401; malformed bodies are 400")
    func failures() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let (wrong, wrongBody, _) = try await client.json(
                .post,
                "/v1/sessions",
                body: #"{"username":"dana","password":"wrong password"}"#
            )
            let (unknown, unknownBody, _) = try await client.json(
                .post,
                "/v1/sessions",
                body: #"{"username":"nobody","password":"wrong password"}"#
            )
            #expect(wrong == .unauthorized && unknown == .unauthorized)
            #expect(wrongBody == unknownBody)
            #expect(wrongBody["error"]?.objectValue?["message"]?.stringValue == LoginService.invalidCredentialsMessage)
            for body in [
                "", "[]", #"{"username":"dana"}"#, #"{"username":1,"password":"x"}"#,
                #"{"username":"a","username":"b","password":"x"}"#,
            ] {
                #expect(try await client.json(.post, "/v1/sessions", body: body).0 == .badRequest, "\(body)")
            }
            #expect(try await client.json(.get, "/token/driver/v1").0 == .unauthorized)
            #expect(try await client.json(.get, "/token/driver/v1", bearer: "not-a-session").0 == .unauthorized)
        }
    }

    @Test(
        "an unknown user is checked at the stored hashes' highest cost, read again as users are added; a login re-hashes at the server's"
    )
    func bcryptCosts() async throws {
        let store = try SQLiteTokenServerStore(inMemory: ())
        let t0 = Date(epochSeconds: 1_800_000_000)
        let clock = ManualClock(date: t0)
        let hasher = PasswordHasher(cost: 4)
        let service = LoginService(users: store, sessions: store, hasher: hasher, clock: clock)
        #expect(try await service.unknownUserCost(at: t0) == 4, "no users: the hasher's own cost")
        let atFive = PasswordHasher(cost: 5)
        for name in ["ann", "bob"] {
            try await store.addUser(
                AppUser(username: name, role: .driver),
                passwordHash: try await atFive.hash("pw-\(name)"),
                createdAt: t0
            )
        }
        #expect(try await service.unknownUserCost(at: t0 + 30) == 4, "read once a minute")
        #expect(try await service.unknownUserCost(at: t0 + 60) == 5)
        // Users added while the server runs (by `fleetauth users add` at another cost) move it at the next read.
        let atSix = PasswordHasher(cost: 6)
        for name in ["cat", "dan", "eve"] {
            try await store.addUser(
                AppUser(username: name, role: .driver),
                passwordHash: try await atSix.hash("pw-\(name)"),
                createdAt: t0
            )
        }
        #expect(try await service.unknownUserCost(at: t0 + 90) == 5)
        #expect(try await service.unknownUserCost(at: t0 + 120) == 6)
        #expect(try await store.passwordHashCosts() == [5: 2, 6: 3])

        // A wrong password costs the work of one check at the highest cost (2^6), whoever the name is: an unknown
        // user, a user at that cost, or a user at a lower cost (padded with checks at its own).
        for name in ["nobody", "cat", "bob"] {
            let before = hasher.workDone
            await #expect(throws: GoogleAPIError.self) {
                _ = try await service.login(username: name, password: "wrong", address: nil)
            }
            #expect(hasher.workDone - before == 1 << 6, "\(name)")
        }

        // A login at another cost re-hashes the password at the server's, and keeps the user's sessions.
        let first = try await service.login(username: "ann", password: "pw-ann", address: nil)
        let stored = try #require(try await store.credentials(for: "ann")?.passwordHash)
        #expect(PasswordHasher.cost(of: stored) == 4)
        #expect(try await service.user(sessionToken: first.token).username == "ann")
        _ = try await service.login(username: "ann", password: "pw-ann", address: nil)
        #expect(try await store.credentials(for: "ann")?.passwordHash == stored, "hashed once")
        // A password changed meanwhile is not overwritten by a re-hash of the old one.
        #expect(try await store.upgradePasswordHash("new", for: "bob", replacing: "not-the-stored-hash") == false)
        #expect(try await store.passwordHashCosts() == [4: 1, 5: 1, 6: 3])
        #expect(PasswordHasher.cost(of: "$2b$12$abc") == 12)
        for malformed in ["", "$2b$1", "$2x$12$", "$2b$03$", "$2b$32$", "bcrypt"] {
            #expect(PasswordHasher.cost(of: malformed) == nil, "\(malformed)")
        }
    }

    @Test("a password with NUL or another control character is refused when set (400) and never logs in")
    func controlCharacters() async throws {
        let fixture = try await TokenServerFixture()
        await expectCode(GoogleAPIError.invalidArgument("")) {
            try await fixture.server.users.addUser(
                AppUser(username: "nul", role: .driver),
                password: "password\u{0}junk"
            )
        }
        await expectCode(GoogleAPIError.invalidArgument("")) {
            try await fixture.server.users.addUser(AppUser(username: "tab", role: .driver), password: "pass\tword1")
        }
        try await fixture.application.test(.router) { client in
            // bcrypt reads a C string: without the check, everything after a NUL would be ignored.
            for password in [#"correct horse battery\u0000junk"#, #"correct horse battery\u0000"#] {
                let (status, _, _) = try await client.json(
                    .post,
                    "/v1/sessions",
                    body: #"{"username":"dana","password":"\#(password)"}"#
                )
                #expect(status == .unauthorized, "\(password)")
            }
            let session = try await client.login("ops")
            let (status, body, _) = try await client.json(
                .post,
                "/v1/admin/users",
                bearer: session,
                body: #"{"username":"nul","role":"driver","password":"\u0000password"}"#
            )
            #expect(status == .badRequest)
            #expect(body["error"]?.objectValue?["message"]?.stringValue?.contains("control characters") == true)
            #expect(try await fixture.store.credentials(for: "nul") == nil, "nothing was written")
        }
    }

    @Test("sessions expire")
    func expiry() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let session = try await client.login("dana")
            fixture.clock.advance(by: .seconds(12 * 3600 - 1))
            #expect(try await client.json(.get, "/token/driver/v1", bearer: session).0 == .ok)
            fixture.clock.advance(by: .seconds(1))
            #expect(try await client.json(.get, "/token/driver/v1", bearer: session).0 == .unauthorized)
        }
    }

    @Test("repeated failures lock the username out with 429 and Retry-After, even for the right password")
    func throttling() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let wrong = #"{"username":"dana","password":"wrong password"}"#
            for _ in 0..<5 { #expect(try await client.json(.post, "/v1/sessions", body: wrong).0 == .unauthorized) }
            let (status, body, headers) = try await client.json(
                .post,
                "/v1/sessions",
                body: #"{"username":"dana","password":"correct horse battery"}"#
            )
            #expect(status == .tooManyRequests)
            #expect(body["error"]?.objectValue?["status"] == "RESOURCE_EXHAUSTED")
            let retryAfter = try #require(headers[.retryAfter].flatMap { Int($0) })
            #expect(retryAfter == 30)
            // Other users are unaffected.
            _ = try await client.login("dave")
            fixture.clock.advance(by: .seconds(retryAfter))
            _ = try await client.login("dana")
        }
    }

    @Test(
        "a username with NUL (or any name no user can have) is an unknown user: no login as its prefix, no bypass of a lockout"
    )
    func impossibleUsernames() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let right = TokenServerFixture.password
            for name in [#"dana\u0000"#, #"dana\u0000x"#, "Dana", "dana ", String(repeating: "d", count: 65)] {
                let body = #"{"username":"\#(name)","password":"\#(right)"}"#
                let (status, answer, _) = try await client.json(.post, "/v1/sessions", body: body)
                #expect(status == .unauthorized, "\(name)")
                #expect(answer["error"]?.objectValue?["message"]?.stringValue == LoginService.invalidCredentialsMessage)
            }
            for _ in 0..<5 {
                let wrong = #"{"username":"dana","password":"wrong password"}"#
                #expect(try await client.json(.post, "/v1/sessions", body: wrong).0 == .unauthorized)
            }
            let locked = #"{"username":"dana\u0000","password":"\#(right)"}"#
            #expect(try await client.json(.post, "/v1/sessions", body: locked).0 == .unauthorized)
            let dana = #"{"username":"dana","password":"\#(right)"}"#
            #expect(try await client.json(.post, "/v1/sessions", body: dana).0 == .tooManyRequests)
        }
    }

    @Test("the lockout doubles with each further failure; an address is throttled across usernames")
    func throttlePolicy() async throws {
        let throttle = LoginThrottle()
        let start = Date(timeIntervalSince1970: 1_000_000)
        func lockout(_ username: String, _ address: String?, at time: Date) async throws -> Int? {
            do {
                try await throttle.check(username: username, address: address, now: time)
                return nil
            } catch let error as GoogleAPIError {
                return error.retryAfter
            }
        }
        var time = start
        for _ in 0..<5 { try await throttle.recordFailure(username: "u", address: nil, now: time) }
        #expect(try await lockout("u", nil, at: time) == 30)
        time += 30
        #expect(try await lockout("u", nil, at: time) == nil)
        try await throttle.recordFailure(username: "u", address: nil, now: time)
        #expect(try await lockout("u", nil, at: time) == 60)
        for index in 0..<20 {
            try await throttle.recordFailure(username: "user\(index)", address: "10.0.0.1", now: start)
        }
        #expect(try await lockout("someone-else", "10.0.0.1", at: start) == 30)
        #expect(try await lockout("someone-else", "10.0.0.2", at: start) == nil)
    }
}

@Suite("Token server: token endpoints", .temporaryResources)
struct TokenEndpointTests {
    static func verify(_ jwt: String, _ fixture: TokenServerFixture, family: TokenFamily) throws -> VerifiedToken {
        let key = try fixture.server.keyring.signingKey(for: family).key!
        var trust = TrustStore()
        trust.add([key.verificationKey], issuer: key.clientEmail)
        return try FleetEngineTokenVerifier(trustStore: trust).verify(jwt, now: fixture.clock.currentDate)
    }

    @Test("a driver gets a token for a granted vehicle, with the minting issue's header and claims; 403 otherwise")
    func driver() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let session = try await client.login("dana")
            let (status, body, headers) = try await client.json(.get, "/token/driver/v1", bearer: session)
            #expect(status == .ok)
            #expect(headers[.cacheControl] == "no-store")
            #expect(
                body.map(\.key) == ["jwt", "token", "creationTimestamp", "expirationTimestamp", "expiresInSeconds"]
            )
            let jwt = try #require(body["jwt"]?.stringValue)
            #expect(body["token"]?.stringValue == jwt)
            let verified = try Self.verify(jwt, fixture, family: .driver)
            let key = try fixture.server.keyring.signingKey(for: .driver).key!
            #expect(
                JSONValue.object(verified.header).jsonText
                    == #"{"alg":"RS256","typ":"JWT","kid":"\#(key.privateKeyID)"}"#
            )
            #expect(verified.claims.issuer == key.clientEmail && verified.claims.subject == key.clientEmail)
            #expect(key.clientEmail == "fleetauth-driver@demo-project.iam.gserviceaccount.com")
            #expect(verified.claims.audience == "https://fleetengine.googleapis.com/")
            #expect(verified.claims.lifetime == 3600)
            #expect(verified.claims.authorization == AuthorizationClaims(vehicleID: "v1"))
            #expect(body["creationTimestamp"]?.integerValue == verified.claims.issuedAt * 1000)
            #expect(body["expirationTimestamp"]?.integerValue == verified.claims.expiresAt * 1000)
            #expect(body["expiresInSeconds"] == 3600)

            // Another driver's vehicle and a vehicle nobody has: the same 403.
            let (other, otherBody, _) = try await client.json(.get, "/token/driver/v2", bearer: session)
            let (missing, missingBody, _) = try await client.json(.get, "/token/driver/nope", bearer: session)
            #expect(other == .forbidden && missing == .forbidden)
            #expect(otherBody == missingBody)
            // A driver is no consumer, server or fleet reader.
            for path in ["/token/consumer/t1", "/token/server", "/token/fleet_reader", "/token/delivery_consumer/x"] {
                #expect(try await client.json(.get, path, bearer: session).0 == .forbidden, "\(path)")
            }
        }
    }

    @Test("a consumer gets tokens for its trips and tracking IDs only; delivery answers carry the LMFS keys")
    func consumer() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let session = try await client.login("carol")
            let (status, body, _) = try await client.json(.get, "/token/consumer/t1", bearer: session)
            #expect(status == .ok)
            let verified = try Self.verify(try #require(body["jwt"]?.stringValue), fixture, family: .consumer)
            #expect(verified.claims.authorization == AuthorizationClaims(tripID: "t1"))
            #expect(try await client.json(.get, "/token/consumer/t2", bearer: session).0 == .forbidden)
            #expect(try await client.json(.get, "/token/driver/v1", bearer: session).0 == .forbidden)

            let (tracking, trackingBody, _) = try await client.json(
                .get,
                "/token/delivery_consumer/track-1",
                bearer: session
            )
            #expect(tracking == .ok)
            let deliveryToken = try Self.verify(
                try #require(trackingBody["token"]?.stringValue),
                fixture,
                family: .delivery
            )
            #expect(deliveryToken.claims.authorization == AuthorizationClaims(trackingID: "track-1"))
            #expect(trackingBody["expiration_timestamp_ms"] == trackingBody["expirationTimestamp"])
            #expect(trackingBody["creation_timestamp_ms"] == trackingBody["creationTimestamp"])
        }
    }

    @Test("server and fleet-reader tokens are for operators only; IDs are required and never '*'")
    func operatorsAndIDs() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let ops = try await client.login("ops")
            let (status, body, _) = try await client.json(.get, "/token/server", bearer: ops)
            #expect(status == .ok)
            let server = try Self.verify(try #require(body["jwt"]?.stringValue), fixture, family: .server)
            #expect(server.claims.authorization == FleetEngineTokenType.server.authorization)
            let (_, reader, _) = try await client.json(.get, "/token/fleet_reader", bearer: ops)
            let fleetReader = try Self.verify(try #require(reader["token"]?.stringValue), fixture, family: .reader)
            #expect(fleetReader.claims.authorization == FleetEngineTokenType.fleetReader.authorization)
            // Operators may get any driver token; nobody gets a wildcard or an invalid ID.
            #expect(try await client.json(.get, "/token/driver/any-vehicle", bearer: ops).0 == .ok)
            for path in ["/token/driver/*", "/token/driver", "/token/consumer/a%2Fb", "/token/delivery_driver/%2A"] {
                #expect(try await client.json(.get, path, bearer: ops).0 == .badRequest, "\(path)")
            }
            let consumer = try await client.login("carol")
            #expect(try await client.json(.get, "/token/server", bearer: consumer).0 == .forbidden)
            // A malformed ID is 400 with any session or none — never the 401 that signs a web page's user out.
            for bearer in [consumer, nil, "not-a-session"] {
                let (status, body, _) = try await client.json(.get, "/token/consumer/tA%00", bearer: bearer)
                #expect(status == .badRequest, "\(String(describing: bearer))")
                #expect(body["error"]?.objectValue?["message"]?.stringValue?.contains("trip ID must be") == true)
            }
            #expect(try await client.json(.get, "/token/consumer/tA", bearer: nil).0 == .unauthorized)
        }
    }

    @Test("a login must be JSON: a form or text body is 415 and costs the user nothing")
    func loginContentType() async throws {
        let fixture = try await TokenServerFixture()
        try await fixture.application.test(.router) { client in
            let wrong = #"{"username":"dana","password":"wrong"}"#
            for contentType in [nil, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x"] {
                var headers = HTTPFields()
                if let contentType { headers[.contentType] = contentType }
                let status = try await client.execute(
                    uri: "/v1/sessions",
                    method: .post,
                    headers: headers,
                    body: ByteBuffer(string: wrong)
                ) { $0.status }
                #expect(status == .unsupportedMediaType, "\(String(describing: contentType))")
            }
            #expect(try await fixture.store.throttleEntries(keys: ["user:dana"], at: Date()).isEmpty, "nothing counted")
            let status = try await client.execute(
                uri: "/v1/sessions",
                method: .post,
                headers: [.contentType: "Application/JSON; charset=utf-8"],
                body: ByteBuffer(string: #"{"username":"dana","password":"\#(TokenServerFixture.password)"}"#)
            ) { $0.status }
            #expect(status == .created)
        }
    }

    @Test("every issued token is audited (user, type, scope, kid, exp), never the token itself")
    func audit() async throws {
        let records = LogRecorder()
        let fixture = try await TokenServerFixture(auditLogger: .recording(to: records))
        try await fixture.application.test(.router) { client in
            let session = try await client.login("dana")
            let (_, body, _) = try await client.json(.get, "/token/delivery_driver/dv1", bearer: session)
            let jwt = try #require(body["jwt"]?.stringValue)
            let entries = try await fixture.store.recentEntries(limit: 10)
            #expect(entries.count == 1)
            let entry = try #require(entries.first)
            #expect(entry.username == "dana" && entry.endpoint == .deliveryDriver)
            #expect(entry.scope == #"{"deliveryvehicleid":"dv1"}"#)
            #expect(entry.kid == (try fixture.server.keyring.signingKey(for: .delivery).record.kid))
            #expect(entry.expiresAt.epochSeconds * 1000 == body["expirationTimestamp"]?.integerValue)
            let ops = try await client.login("ops")
            let (_, audit, _) = try await client.json(.get, "/v1/admin/audit?limit=5", bearer: ops)
            #expect(audit["entries"]?.arrayValue?.count == 1)
            #expect(!audit.jsonText.contains(String(jwt.split(separator: ".")[2])))
            let issued = records.lines.filter { $0.contains("issued token") }
            #expect(issued.count == 1)
            #expect(issued.first?.contains("dana") == true && issued.first?.contains(entry.kid) == true)
            for line in records.lines {
                #expect(!line.contains(String(jwt.split(separator: ".")[2])) && !line.contains(session))
            }
        }
    }
}

/// A value handed to a `@Sendable` test closure that only reads it.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
}
