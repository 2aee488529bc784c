import FleetAuthClient
import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthStack
import FleetAuthTesting
import FleetEngineEmulator
import FleetTokenServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The token server and emulator of a ``LocalStack`` in a temporary directory, with users: `ops` (operator),
/// `dana` (driver of v1) and `carl` (consumer of t1).
struct StackFixture {
    static let password = "correct horse battery staple"
    let directory: String
    let stack: LocalStack
    let sessions: [String: String]

    /// - Parameter keyless: the token server holds no key and signs through the emulator's IAM.
    init(keyless: Bool = false) async throws {
        directory = try TestResources.required().temporaryDirectory("stack")
        stack =
            keyless
            ? try await LocalStack(
                dataDirectory: directory,
                tokenServer: .init(dataDirectory: directory, bcryptCost: 4),
                keylessIAMPort: 0,
                keyGenerator: TestKeys.generator
            )
            : try await Self.open(directory)
        let users: [(String, AppUserRole, Grant?)] = [
            ("ops", .operator, nil), ("dana", .driver, Grant(kind: .vehicle, id: "v1")),
            ("carl", .consumer, Grant(kind: .trip, id: "t1")),
        ]
        var sessions: [String: String] = [:]
        for (name, role, grant) in users {
            try await stack.tokenServer.users.addUser(AppUser(username: name, role: role), password: Self.password)
            if let grant { try await stack.tokenServer.users.grant(grant, to: name) }
            sessions[name] = try await stack.tokenServer.login.login(
                username: name,
                password: Self.password,
                address: nil
            ).token
        }
        self.sessions = sessions
    }

    static func open(_ directory: String) async throws -> LocalStack {
        try await LocalStack(
            dataDirectory: directory,
            tokenServer: .init(dataDirectory: directory, bcryptCost: 4),
            keyGenerator: TestKeys.generator
        )
    }

    /// The same data directory opened again, as a restarted process would (a stack runs once: its stores close
    /// when it stops).
    func restarted() async throws -> LocalStack { try await Self.open(directory) }

    /// `user`'s token endpoint fetcher for `path` (`/token/driver/{vehicleId}`...).
    func fetcher(_ endpoints: LocalStack.Endpoints, user: String, path: String) throws -> TokenEndpointFetcher {
        let session = try #require(sessions[user])
        return TokenEndpointFetcher(
            urlTemplate: endpoints.tokenServerURL + path,
            headers: { ["Authorization": "Bearer \(session)"] }
        )
    }

    /// A Fleet Engine client on the emulator whose tokens come from `fetcher` through a caching provider.
    func client(
        _ endpoints: LocalStack.Endpoints,
        fetcher: any TokenFetcher,
        clock: ManualClock = ManualClock(),
        onExchange: (@Sendable (FleetEngineClient.Exchange) -> Void)? = nil
    ) throws -> FleetEngineClient {
        FleetEngineClient(
            providerID: endpoints.project,
            tokens: CachingTokenProvider(fetcher: fetcher, clock: clock),
            baseURL: try #require(URL(string: endpoints.emulatorURL)),
            timeout: 5,
            onExchange: onExchange
        )
    }

    /// A Fleet Engine client for `user`, fetching tokens from `path`.
    func client(
        _ endpoints: LocalStack.Endpoints,
        user: String,
        path: String,
        clock: ManualClock = ManualClock(),
        onExchange: (@Sendable (FleetEngineClient.Exchange) -> Void)? = nil
    ) throws -> FleetEngineClient {
        try client(
            endpoints,
            fetcher: try fetcher(endpoints, user: user, path: path),
            clock: clock,
            onExchange: onExchange
        )
    }

    /// Creates vehicle v1 and trip t1 on it with the operator's server token.
    func provision(_ endpoints: LocalStack.Endpoints) async throws -> FleetEngineClient {
        let backend = try client(endpoints, user: "ops", path: "/token/server")
        try await backend.createVehicle(
            "v1",
            [
                "vehicleState": "OFFLINE", "supportedTripTypes": ["EXCLUSIVE"], "maximumCapacity": 4,
                "vehicleType": ["category": "AUTO"],
            ]
        )
        try await backend.createTrip(
            "t1",
            [
                "vehicleId": "v1", "tripType": "EXCLUSIVE",
                "pickupPoint": ["point": ["latitude": 37.01, "longitude": -122.0]],
                "dropoffPoint": ["point": ["latitude": 37.05, "longitude": -122.0]],
            ]
        )
        return backend
    }
}

/// Records the client's HTTP exchanges.
final class ExchangeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var exchanges: [FleetEngineClient.Exchange] = []
    func record(_ exchange: FleetEngineClient.Exchange) { lock.withLock { exchanges.append(exchange) } }
    var statuses: [Int?] { lock.withLock { exchanges.map(\.httpStatus) } }
    var attempts: [Int] { lock.withLock { exchanges.map(\.attempt) } }
}

/// A fetcher that spoils the signature of the first `spoiled` tokens it passes on.
final class SpoilingFetcher: TokenFetcher, @unchecked Sendable {
    private let inner: any TokenFetcher
    private let lock = NSLock()
    private var remaining: Int
    private var fetches = 0
    var count: Int { lock.withLock { fetches } }

    init(_ inner: any TokenFetcher, spoiled: Int) {
        self.inner = inner
        remaining = spoiled
    }

    func fetchToken(for context: AuthorizationContext) async throws -> FetchedToken {
        var token = try await inner.fetchToken(for: context)
        let (spoil, serial) = lock.withLock {
            fetches += 1
            remaining -= 1
            return (remaining >= 0, fetches)
        }
        if spoil {
            var parts = token.jwt.split(separator: ".").map(String.init)
            // Another first character keeps the base64url well-formed but the signature wrong; a different one
            // each time, since the server mints the same token twice within a second.
            let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ").filter { !parts[2].hasPrefix(String($0)) }
            parts[2] = String(letters[serial % letters.count]) + parts[2].dropFirst()
            token.jwt = parts.joined(separator: ".")
        }
        return token
    }
}

@Suite("Client SDK against a live emulator and token server", .temporaryResources)
struct LiveFleetTests {
    static func location(_ latitude: Double) -> VehicleLocation {
        VehicleLocation(latitude: latitude, longitude: -122.0, heading: 0, speed: 8, time: Date())
    }

    @Test(
        "the reporter sends the newest location per interval and goes offline; the tracker follows the trip to COMPLETE"
    )
    func reporterAndTracker() async throws {
        let fixture = try await StackFixture()
        let outcome = try await fixture.stack.run { endpoints in
            let backend = try await fixture.provision(endpoints)
            try await backend.updateTrip("t1", ["tripStatus": "ENROUTE_TO_PICKUP"], updateMask: ["trip_status"])

            // Driver app.
            let driverClock = ManualClock()
            let driver = try fixture.client(endpoints, user: "dana", path: "/token/driver/{vehicleId}")
            let reporter = VehicleReporter(client: driver, vehicleID: "v1", interval: .seconds(1), clock: driverClock)
            #expect(reporter.interval == .seconds(5), "the interval is clamped to 5–60 s")
            var reports = reporter.results.makeAsyncIterator()
            reporter.goOnline()
            reporter.report(Self.location(37.001))
            async let reporting: Void = reporter.run()
            let first = try #require(await reports.next())
            #expect(first.isAccepted && first.state == .online && first.location?.latitude == 37.001, "\(first)")
            // Locations from an AsyncSequence, faster than the interval: the newest wins.
            let (locations, feed) = AsyncStream.makeStream(of: VehicleLocation.self)
            feed.yield(Self.location(37.002))
            feed.yield(Self.location(37.003))
            feed.finish()
            try await reporter.report(contentsOf: locations)
            driverClock.advance(by: .seconds(5))
            let second = try #require(await reports.next())
            #expect(second.isAccepted && second.state == nil && second.location?.latitude == 37.003)
            let vehicle = try await backend.getVehicle("v1")
            #expect(vehicle["vehicleState"] == "ONLINE")
            #expect(vehicle["lastLocation"]?.objectValue.flatMap(VehicleLocation.init(json:))?.latitude == 37.003)

            // Consumer app.
            let consumerClock = ManualClock()
            let consumer = try fixture.client(endpoints, user: "carl", path: "/token/consumer/{tripId}")
            let tracker = TripTracker(client: consumer, tripID: "t1", interval: .seconds(2), clock: consumerClock)
            #expect(tracker.interval == .seconds(5))
            var snapshots = tracker.snapshots().makeAsyncIterator()
            let tracked = try #require(try await snapshots.next())
            #expect(tracked.tripID == "t1" && tracked.status == .enrouteToPickup && tracked.vehicleID == "v1")
            #expect(tracked.vehicleLocation?.latitude == 37.003)
            #expect(tracked.remainingWaypoints.map(\.type) == ["PICKUP_WAYPOINT_TYPE", "DROP_OFF_WAYPOINT_TYPE"])
            #expect(tracked.remainingWaypoints.first?.distanceMeters.map { (700...800).contains($0) } == true)

            try await backend.updateTrip("t1", ["tripStatus": "COMPLETE"], updateMask: ["trip_status"])
            consumerClock.advance(by: .seconds(5))
            let done = try #require(try await snapshots.next())
            #expect(done.status == .complete && done.isFinished)
            #expect(try await snapshots.next() == nil, "the stream ends with the finished trip")

            reporter.finish()
            let final = try #require(await reports.next())
            #expect(final.isAccepted && final.state == .offline)
            await reporting
            #expect(await reports.next() == nil, "results finish when run() returns")
            return try await backend.getVehicle("v1")["vehicleState"]
        }
        #expect(outcome == "OFFLINE")
    }

    @Test("a 401 invalidates that token and retries once; 403 and 404 are typed and not retried")
    func statusHandling() async throws {
        let fixture = try await StackFixture()
        try await fixture.stack.run { endpoints in
            _ = try await fixture.provision(endpoints)
            // The first token's signature is spoiled: 401, a fresh token, 200.
            let log = ExchangeLog()
            let spoiler = SpoilingFetcher(
                try fixture.fetcher(endpoints, user: "dana", path: "/token/driver/{vehicleId}"),
                spoiled: 1
            )
            let driver = try fixture.client(endpoints, fetcher: spoiler, onExchange: log.record)
            let vehicle = try await driver.getVehicle("v1")
            #expect(vehicle["name"] == "providers/demo-project/vehicles/v1")
            #expect(log.statuses == [401, 200] && log.attempts == [1, 2] && spoiler.count == 2)

            // Every token spoiled: one retry, then UNAUTHENTICATED.
            let badLog = ExchangeLog()
            let bad = try fixture.client(
                endpoints,
                fetcher: SpoilingFetcher(
                    try fixture.fetcher(endpoints, user: "dana", path: "/token/driver/{vehicleId}"),
                    spoiled: 100
                ),
                onExchange: badLog.record
            )
            let unauthenticated = await #expect(throws: FleetEngineClientError.self) {
                try await bad.getVehicle("v1")
            }
            #expect(unauthenticated?.code == .unauthenticated && unauthenticated?.isTransient == false)
            #expect(badLog.statuses == [401, 401])

            // A valid token for another vehicle: 403 from Fleet Engine, once.
            let deniedLog = ExchangeLog()
            let driverAgain = try fixture.client(
                endpoints,
                user: "dana",
                path: "/token/driver/{vehicleId}",
                onExchange: deniedLog.record
            )
            let denied = await #expect(throws: FleetEngineClientError.self) {
                try await driverAgain.getVehicle("v2", context: .vehicle("v1"))
            }
            #expect(denied?.code == .permissionDenied && denied?.httpStatus == 403)
            #expect(denied?.message.contains("GetVehicle") == true)
            #expect(deniedLog.statuses == [403])

            // No grant for trip t9: the token server refuses, nothing reaches Fleet Engine.
            let consumerLog = ExchangeLog()
            let consumer = try fixture.client(
                endpoints,
                user: "carl",
                path: "/token/consumer/{tripId}",
                onExchange: consumerLog.record
            )
            let refused = await #expect(throws: FleetEngineClientError.self) { try await consumer.getTrip("t9") }
            #expect(refused?.code == .tokenUnavailable && refused?.tokenError?.httpStatus == 403)
            #expect(consumerLog.statuses.isEmpty)

            // A trip that does not exist, with the server's wildcard token: 404 NOT_FOUND.
            let backend = try fixture.client(endpoints, user: "ops", path: "/token/server")
            let missing = await #expect(throws: FleetEngineClientError.self) { try await backend.getTrip("t9") }
            #expect(missing?.code == .notFound && missing?.httpStatus == 404)
        }
    }

    @Test("keyless (serve --keyless): every token comes from the emulator's IAM; the token server holds no key")
    func keylessStack() async throws {
        let fixture = try await StackFixture(keyless: true)
        try await fixture.stack.run { endpoints in
            // The IAM stand-ins have a loopback listener of their own: the API's port does not serve them.
            let iamPort = try #require(fixture.stack.keylessIAMPort)
            #expect(endpoints.emulatorURL != "http://127.0.0.1:\(iamPort)")
            let metadata = "/computeMetadata/v1/instance/service-accounts/default/token"
            var request = URLRequest(url: try #require(URL(string: endpoints.emulatorURL + metadata)))
            request.setValue("Google", forHTTPHeaderField: "Metadata-Flavor")
            let (_, onAPI) = try await URLSession.shared.data(for: request)
            #expect((onAPI as? HTTPURLResponse)?.statusCode == 404)
            request.url = URL(string: "http://127.0.0.1:\(iamPort)" + metadata)
            let (_, onIAM) = try await URLSession.shared.data(for: request)
            #expect((onIAM as? HTTPURLResponse)?.statusCode == 200)
            _ = try await fixture.provision(endpoints)  // server tokens, signed through signJwt
            let driver = try fixture.client(endpoints, user: "dana", path: "/token/driver/{vehicleId}")
            let vehicle = try await driver.getVehicle("v1")
            #expect(vehicle["name"]?.stringValue?.hasSuffix("/vehicles/v1") == true)
            let token = try await fixture.fetcher(endpoints, user: "dana", path: "/token/driver/{vehicleId}")
                .fetchToken(for: .vehicle("v1"))
            let iamKey = try ServiceAccountKey(contentsOf: fixture.directory + "/iam/driver.json")
            #expect(try CompactJWS(token.jwt).keyID == iamKey.privateKeyID)
            let keys = try await fixture.stack.tokenServer.store.signingKeys()
            #expect(!keys.isEmpty && keys.allSatisfy(\.material.isExternal))
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.directory + "/keys"))
    }

    @Test("an app logs in to the token server, fetches its tokens with the session, and logs out")
    func appSession() async throws {
        let fixture = try await StackFixture()
        try await fixture.stack.run { endpoints in
            let base = try #require(URL(string: endpoints.tokenServerURL))
            let wrong = await #expect(throws: FleetTokenError.self) {
                try await TokenServerSession.logIn(baseURL: base, username: "dana", password: "not it")
            }
            #expect(wrong?.code == .endpointRejected && wrong?.httpStatus == 401)
            let session = try await TokenServerSession.logIn(
                baseURL: base,
                username: "dana",
                password: StackFixture.password
            )
            #expect(session.role == .driver && session.expiresAt > Date().addingTimeInterval(3600))
            // The device token, given back at the next login, is honoured (the same one comes back).
            let device = try #require(session.deviceToken)
            let next = try await TokenServerSession.logIn(
                baseURL: base,
                username: "dana",
                password: StackFixture.password,
                deviceToken: device
            )
            #expect(next.deviceToken == device)
            try await next.logOut()
            let token = try await session.fetcher(.driver).fetchToken(for: .vehicle("v1"))
            let claims = try StrictJSONParser().parseObject(try CompactJWS(token.jwt).payload)
            #expect(claims["authorization"] == .object(["vehicleid": "v1"]))
            try await session.logOut()
            let after = await #expect(throws: FleetTokenError.self) {
                try await session.fetcher(.driver).fetchToken(for: .vehicle("v1"))
            }
            #expect(after?.httpStatus == 401 && after?.isTransient == false)
        }
    }

    @Test("the reporter keeps trying while the token server and Fleet Engine are down, then catches up")
    func outage() async throws {
        let fixture = try await StackFixture()
        // Both servers come back on their ports: ports no other socket can take while they are down.
        let tokenPort = try RestartablePorts.reserve()
        let emulatorPort = try RestartablePorts.reserve()
        let ports = try await fixture.stack.run(emulatorPort: emulatorPort, tokenServerPort: tokenPort) { endpoints in
            _ = try await fixture.provision(endpoints)
            return endpoints
        }
        let clock = ManualClock()
        let driver = try fixture.client(ports, user: "dana", path: "/token/driver/{vehicleId}", clock: clock)
        let reporter = VehicleReporter(client: driver, vehicleID: "v1", interval: .seconds(5), clock: clock)
        var reports = reporter.results.makeAsyncIterator()
        reporter.goOnline()
        reporter.report(Self.location(37.1))
        let reporting = Task { await reporter.run() }

        let down = try #require(await reports.next())
        #expect(
            down.error?.code == .tokenUnavailable && down.error?.isTransient == true,
            "\(String(describing: down.error))"
        )
        reporter.report(Self.location(37.2))
        reporter.report(Self.location(37.3))

        let restarted = try await fixture.restarted()
        let latitude = try await restarted.run(emulatorPort: emulatorPort, tokenServerPort: tokenPort) { _ in
            clock.advance(by: .seconds(5))
            let back = try #require(await reports.next())
            #expect(back.isAccepted && back.state == .online, "\(String(describing: back.error))")
            #expect(back.location?.latitude == 37.3, "the newest location is sent when the servers return")
            let backend = try fixture.client(ports, user: "ops", path: "/token/server")
            let vehicle = try await backend.getVehicle("v1")
            return vehicle["lastLocation"]?.objectValue.flatMap(VehicleLocation.init(json:))?.latitude
        }
        #expect(latitude == 37.3)
        reporter.finish()
        clock.advance(by: .seconds(5))
        // Both servers are down again: the final update fails (transiently); cancelling ends the reporter.
        let final = try #require(await reports.next())
        #expect(final.state == .offline && final.error?.isTransient == true)
        reporting.cancel()
        await reporting.value
        #expect(await reports.next() == nil)
    }

    @Test(
        "requests cancelled as their answers or refusals arrive end in CancellationError, never a crash",
        // A hang (what a cancelled plain data(for:) does here) ends it; the stack's start under a full parallel
        // test run can take most of a minute on two cores.
        .timeLimit(.minutes(3))
    )
    func cancellationRaces() async throws {
        let fixture = try await StackFixture()
        try await fixture.stack.run { endpoints in
            // An answer (401: no token) over a live connection, and a refused connection.
            let answered = try #require(URL(string: endpoints.emulatorURL + "/v1/providers/p/vehicles/v1"))
            let refused = try #require(URL(string: "http://127.0.0.1:1/"))
            var outcomes: [String: Int] = [:]
            // A session of its own: the requests it abandons to their timeout do not queue behind (or hold up)
            // other tests' requests on the shared session's connections.
            let session = URLSession(configuration: .ephemeral)
            defer { session.finishTasksAndInvalidate() }
            for round in 0..<400 {
                let request = URLRequest(url: round.isMultiple(of: 2) ? answered : refused, timeoutInterval: 5)
                let call = Task { try await session.cancellationSafeData(for: request) }
                for _ in 0..<(round % 40) { await Task.yield() }
                call.cancel()
                let outcome: String
                do {
                    let (_, response) = try await call.value
                    outcome = "HTTP \((response as? HTTPURLResponse)?.statusCode ?? 0)"
                } catch is CancellationError {
                    outcome = "cancelled"
                } catch let error as URLError {
                    outcome = error.code == .cancelled ? "URLError.cancelled" : "unreachable"
                }
                outcomes[outcome, default: 0] += 1
            }
            #expect(outcomes["URLError.cancelled"] == nil, "\(outcomes)")
            #expect(outcomes["cancelled", default: 0] > 0, "\(outcomes)")
            #expect(Set(outcomes.keys).isSubset(of: ["HTTP 401", "cancelled", "unreachable"]), "\(outcomes)")

            // Cancelled before it starts: no request is made.
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await session.cancellationSafeData(for: URLRequest(url: answered))
            }
            await #expect(throws: CancellationError.self) { try await early.value }
        }
    }
}
