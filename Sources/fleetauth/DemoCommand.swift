import ArgumentParser
import FleetAuthClient
import FleetAuthCore
import FleetAuthStack
import FleetEngineEmulator
import FleetTokenServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Run the whole chain locally: token server, Fleet Engine emulator, simulated driver and consumer apps.",
        discussion: """
            Starts the token server and the emulator on free loopback ports with data in a temporary directory, \
            creates users, grants, vehicles and trips, then runs simulated driver apps (VehicleReporter, moving \
            along routes) and consumer apps (TripTracker) through FleetAuthClient on an accelerated clock. Ends \
            with a summary table and a list of checks; exits 1 if any check failed.
            """
    )

    @Option(help: "Simulated driver apps (one vehicle each).") var drivers: Int = 4
    @Option(help: "Simulated consumer apps (one trip each, shared out among the drivers).") var consumers: Int = 4
    @Option(help: "Run time in seconds.") var duration: Int = 30
    @Option(help: "How much faster than real time the apps' clock runs.") var speed: Double = 20
    @Option(help: "Keep the servers' data in this directory (default: a temporary one, removed afterwards).")
    var data: String?

    func validate() throws {
        if !(1...200).contains(drivers) { throw ValidationError("--drivers must be between 1 and 200.") }
        if !(0...1000).contains(consumers) { throw ValidationError("--consumers must be between 0 and 1000.") }
        if !(5...3600).contains(duration) { throw ValidationError("--duration must be between 5 and 3600 seconds.") }
        if !(1...120).contains(speed) { throw ValidationError("--speed must be between 1 and 120.") }
    }

    func run() async throws {
        let directory =
            data
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("fleetauth-demo-\(UUID().uuidString)")
            .path
        defer { if data == nil { try? FileManager.default.removeItem(atPath: directory) } }
        say("FleetAuth demo: \(drivers) driver apps, \(consumers) consumer apps, \(duration) s at \(Int(speed))× speed")
        say("Data: \(directory)\(data == nil ? " (removed afterwards)" : "")")
        let stack = try await LocalStack(
            dataDirectory: directory,
            tokenServer: .init(dataDirectory: directory, bcryptCost: 4, tokenLifetime: DemoRun.tokenLifetime))
        let passed = try await stack.run { endpoints in
            say("Token server: \(endpoints.tokenServerURL)   Fleet Engine emulator: \(endpoints.emulatorURL)")
            let run = DemoRun(
                users: stack.tokenServer.users, endpoints: endpoints, drivers: drivers,
                consumers: consumers,
                duration: .seconds(duration), speed: speed)
            return try await run.run()
        }
        if !passed { throw ExitCode(1) }
    }
}

/// One run of the demo against a running stack.
struct DemoRun: Sendable {
    /// Tokens live 15 minutes, so with the provider's 10-minute refresh margin each context refreshes every 5
    /// simulated minutes: a few times per run.
    static let tokenLifetime: Int64 = 900
    static let password = "demo password, not a secret"
    static let center = (latitude: 37.7749, longitude: -122.4194)
    /// Metres per simulated second.
    static let velocity = 12.0

    let users: UserDirectory
    let endpoints: LocalStack.Endpoints
    let drivers: Int
    let consumers: Int
    let duration: Duration
    let speed: Double
    let metrics = DemoMetrics()

    struct Plan: Sendable {
        var vehicleID: String
        var start: (latitude: Double, longitude: Double)
        var trips: [(id: String, pickup: (Double, Double), dropoff: (Double, Double))]
    }

    /// Runs everything; prints the summary; whether every check passed.
    func run() async throws -> Bool {
        let clock = AcceleratedClock(speed: speed)
        let backend = try await app(
            "dispatcher", user: "dispatcher", role: .operator, grants: [], endpoint: .server)
        let plans = makePlans()
        for plan in plans {
            try await backend.createVehicle(
                plan.vehicleID,
                [
                    "vehicleState": "OFFLINE", "supportedTripTypes": ["EXCLUSIVE"], "maximumCapacity": 4,
                    "vehicleType": ["category": "AUTO"],
                    "lastLocation": .object(
                        VehicleLocation(latitude: plan.start.latitude, longitude: plan.start.longitude).jsonObject),
                ])
            for trip in plan.trips {
                try await backend.createTrip(
                    trip.id,
                    [
                        "vehicleId": .string(plan.vehicleID), "tripType": "EXCLUSIVE",
                        "pickupPoint": [
                            "point": ["latitude": .double(trip.pickup.0), "longitude": .double(trip.pickup.1)]
                        ],
                        "dropoffPoint": [
                            "point": ["latitude": .double(trip.dropoff.0), "longitude": .double(trip.dropoff.1)]
                        ],
                    ])
            }
        }
        say("Provisioned \(plans.count) vehicles and \(consumers) trips; users log in and fetch their own tokens.")

        var driverApps: [(Plan, FleetEngineClient)] = []
        for plan in plans {
            let client = try await app(
                "driver", user: "driver-\(plan.vehicleID)", role: .driver,
                grants: [Grant(kind: .vehicle, id: plan.vehicleID)],
                endpoint: .driver)
            driverApps.append((plan, client))
        }
        var consumerApps: [(String, FleetEngineClient)] = []
        for trip in plans.flatMap(\.trips) {
            let client = try await app(
                "consumer", user: "rider-\(trip.id)", role: .consumer, grants: [Grant(kind: .trip, id: trip.id)],
                endpoint: .consumer)
            consumerApps.append((trip.id, client))
        }

        let tripCount = consumerApps.count
        let deadline = clock.now.advanced(by: duration * speed)
        let started = ContinuousClock.now
        let outcomes = try await withThrowingTaskGroup(of: AppOutcome.self) { group in
            for (plan, client) in driverApps {
                group.addTask {
                    try await drive(plan, client: client, backend: backend, clock: clock, until: deadline)
                }
            }
            for (tripID, client) in consumerApps {
                group.addTask { await track(tripID, client: client, clock: clock, until: deadline) }
            }
            group.addTask {
                await progress(started: started, trips: tripCount)
                return .progress
            }
            var outcomes: [AppOutcome] = []
            var drivers = 0
            while let outcome = try await group.next() {
                switch outcome {
                case .driver:
                    outcomes.append(outcome)
                    drivers += 1
                    // Consumers get three more polls after the last driver stops, then the run ends.
                    if drivers == driverApps.count {
                        group.addTask {
                            try? await clock.sleep(for: .seconds(15))
                            return .gracePeriodOver
                        }
                    }
                case .consumer:
                    outcomes.append(outcome)
                case .gracePeriodOver:
                    group.cancelAll()
                case .progress:
                    break
                }
                if outcomes.count == driverApps.count + consumerApps.count { group.cancelAll() }
            }
            return outcomes
        }
        if isTerminal { print("") }

        var checks: [(String, Bool)] = []
        checks += try await chainChecks(backend: backend, driverApps: driverApps, consumerApps: consumerApps)
        checks += try await outcomeChecks(outcomes, backend: backend, plans: plans)
        printSummary(checks: checks)
        return checks.allSatisfy(\.1)
    }

    // MARK: Apps

    /// Creates `user`, logs in over HTTP like an app, and returns a Fleet Engine client whose tokens come from
    /// the token server's `endpoint` with that session.
    func app(
        _ app: String, user: String, role: AppUserRole, grants: [Grant], endpoint: TokenServerSession.Endpoint
    ) async throws
        -> FleetEngineClient
    {
        try await users.addUser(AppUser(username: user, role: role), password: Self.password)
        for grant in grants { try await users.grant(grant, to: user) }
        let session = try await TokenServerSession.logIn(
            baseURL: URL(string: endpoints.tokenServerURL)!, username: user, password: Self.password)
        let fetcher = session.fetcher(endpoint)
        let metrics = self.metrics
        // The provider runs on the accelerated clock too, so tokens age (and are refreshed) at the apps' pace.
        let provider = CachingTokenProvider(
            fetcher: fetcher, clock: AcceleratedClock(speed: speed), onEvent: { metrics.tokenEvent(app: app, $0) })
        return FleetEngineClient(
            providerID: endpoints.project, tokens: provider, baseURL: URL(string: endpoints.emulatorURL)!,
            onExchange: { metrics.exchange(app: app, $0) })
    }

    enum AppOutcome: Sendable {
        case driver(vehicleID: String, last: VehicleLocation?, tripsDone: Int, tripsPlanned: Int)
        case consumer(tripID: String, statuses: [TripStatus], sawVehicle: Bool, sawWaypoints: Bool, error: String?)
        case progress
        case gracePeriodOver
    }

    /// A driver app: goes online, drives each trip's route reporting a location every simulated second (the
    /// reporter sends the newest every 10 s), has the dispatcher update the trip's status at pickup and drop-off,
    /// then goes offline.
    func drive(
        _ plan: Plan, client: FleetEngineClient, backend: FleetEngineClient, clock: AcceleratedClock,
        until deadline: AcceleratedClock.Instant
    ) async throws -> AppOutcome {
        let reporter = VehicleReporter(client: client, vehicleID: plan.vehicleID, clock: clock)
        let metrics = self.metrics
        async let reporting: Void = reporter.run()
        async let results: Void = {
            for await report in reporter.results { metrics.update(accepted: report.isAccepted) }
        }()
        var position = plan.start
        var last: VehicleLocation?
        var done = 0
        func move(to target: (Double, Double)) async throws -> Bool {
            while clock.now < deadline {
                let (step, arrived) = Self.step(from: position, to: target, metres: Self.velocity)
                position = step
                let location = VehicleLocation(
                    latitude: position.latitude, longitude: position.longitude, heading: 0, speed: Self.velocity)
                reporter.report(location)
                last = location
                if arrived { return true }
                try await clock.sleep(for: .seconds(1))
            }
            return false
        }
        func status(_ trip: String, _ status: TripStatus) async throws {
            try await backend.updateTrip(trip, ["tripStatus": .string(status.rawValue)], updateMask: ["trip_status"])
        }
        reporter.goOnline()
        for trip in plan.trips {
            try await status(trip.id, .enrouteToPickup)
            guard try await move(to: trip.pickup) else { break }
            try await status(trip.id, .arrivedAtPickup)
            try await status(trip.id, .enrouteToDropoff)
            guard try await move(to: trip.dropoff) else { break }
            try await status(trip.id, .complete)
            done += 1
        }
        while clock.now < deadline {
            if let last { reporter.report(last) }
            try await clock.sleep(for: .seconds(1))
        }
        reporter.finish()
        await reporting
        await results
        return .driver(vehicleID: plan.vehicleID, last: last, tripsDone: done, tripsPlanned: plan.trips.count)
    }

    /// A consumer app: follows its trip until it ends (or the run does).
    func track(
        _ tripID: String, client: FleetEngineClient, clock: AcceleratedClock, until deadline: AcceleratedClock.Instant
    )
        async -> AppOutcome
    {
        let tracker = TripTracker(client: client, tripID: tripID, clock: clock)
        var statuses: [TripStatus] = []
        var sawVehicle = false
        var sawWaypoints = false
        do {
            for try await snapshot in tracker.snapshots() {
                metrics.snapshot(finished: snapshot.isFinished)
                if statuses.last != snapshot.status { statuses.append(snapshot.status) }
                if snapshot.vehicleLocation != nil { sawVehicle = true }
                if !snapshot.remainingWaypoints.isEmpty { sawWaypoints = true }
                if clock.now > deadline { break }
            }
        } catch {
            return .consumer(
                tripID: tripID, statuses: statuses, sawVehicle: sawVehicle, sawWaypoints: sawWaypoints,
                error: "\(error)")
        }
        return .consumer(
            tripID: tripID, statuses: statuses, sawVehicle: sawVehicle, sawWaypoints: sawWaypoints, error: nil)
    }

    // MARK: Checks

    /// The security half of the chain: what must be refused is refused, with the right status.
    func chainChecks(
        backend: FleetEngineClient, driverApps: [(Plan, FleetEngineClient)], consumerApps: [(String, FleetEngineClient)]
    ) async throws -> [(String, Bool)] {
        var checks: [(String, Bool)] = []
        guard let (plan, driver) = driverApps.first else { return checks }
        // A driver's token names its own vehicle only: using it on another vehicle is 403 from Fleet Engine.
        if driverApps.count > 1 {
            let other = driverApps[1].0.vehicleID
            var refused: FleetEngineClientError?
            do {
                _ = try await driver.send(
                    "UpdateVehicle", "PUT", try driver.path("vehicles", other),
                    query: [URLQueryItem(name: "updateMask", value: "last_location")],
                    body: ["lastLocation": .object(VehicleLocation(latitude: 37.7, longitude: -122.4).jsonObject)],
                    context: .vehicle(plan.vehicleID))
            } catch { refused = error }
            checks.append(
                (
                    "a driver token for \(plan.vehicleID) cannot update \(other) (403)",
                    refused?.code == .permissionDenied
                ))
        }
        // The token server hands out tokens only for granted resources.
        if let (_, consumer) = consumerApps.first {
            var refused: FleetEngineClientError?
            do { _ = try await consumer.getTrip("not-my-trip") } catch { refused = error }
            checks.append(
                ("the token server refuses a token for an ungranted trip (403)", refused?.tokenError?.httpStatus == 403)
            )
        }
        // A token with a forged signature is 401; the client retries once with a fresh token, which also fails.
        let real = try await driver.tokens.token(for: .vehicle(plan.vehicleID))
        var parts = real.split(separator: ".").map(String.init)
        parts[2] = (parts[2].hasPrefix("A") ? "B" : "A") + parts[2].dropFirst()
        let metrics = self.metrics
        let forged = FleetEngineClient(
            providerID: endpoints.project, tokens: FixedTokenProvider(token: parts.joined(separator: ".")),
            baseURL: URL(string: endpoints.emulatorURL)!, onExchange: { metrics.exchange(app: "forger", $0) })
        var rejected: FleetEngineClientError?
        do { _ = try await forged.getVehicle(plan.vehicleID) } catch { rejected = error }
        let forger = metrics.row(app: "forger", context: .vehicle(plan.vehicleID))
        checks.append(
            (
                "a forged signature is 401, retried once with a new token",
                rejected?.code == .unauthenticated && forger.unauthorized == 2
            ))
        return checks
    }

    /// The working half: every update accepted, every trip followed to the end, tokens cached.
    func outcomeChecks(_ outcomes: [AppOutcome], backend: FleetEngineClient, plans: [Plan]) async throws -> [(
        String, Bool
    )] {
        var checks: [(String, Bool)] = []
        let counters = metrics.counters
        checks.append(
            (
                "every location update was accepted (\(counters.accepted)/\(counters.sent))",
                counters.sent > 0 && counters.accepted == counters.sent
            ))
        var drivesComplete = true
        var finalStates = true
        for case .driver(let vehicleID, let last, let done, let planned) in outcomes {
            if done != planned { drivesComplete = false }
            let vehicle = try await backend.getVehicle(vehicleID, context: AuthorizationContext())
            let stored = vehicle["lastLocation"]?.objectValue.flatMap(VehicleLocation.init(json:))
            if vehicle["vehicleState"] != "OFFLINE" || stored?.latitude != last?.latitude
                || stored?.longitude != last?.longitude
            {
                finalStates = false
            }
        }
        checks.append(("every driver finished its trips before the run ended", drivesComplete))
        checks.append(("every vehicle ends OFFLINE at its last reported location", finalStates))
        var tracked = true
        var sawEverything = true
        for case .consumer(_, let statuses, let sawVehicle, let sawWaypoints, let error) in outcomes {
            if error != nil || statuses.last != .complete { tracked = false }
            if !sawVehicle || !sawWaypoints { sawEverything = false }
        }
        checks.append(
            (
                "every consumer followed its trip to COMPLETE (\(counters.finished)/\(consumers))",
                tracked && counters.finished == consumers
            ))
        checks.append(("every consumer saw its vehicle's location and remaining waypoints", sawEverything))
        // Cached tokens: a context fetches once, then again only as each token nears expiry (every 5 simulated
        // minutes with 15-minute tokens and the 10-minute margin).
        let simulated = Double((duration * speed).components.seconds)
        let allowed = Int(simulated / Double(Self.tokenLifetime - 600)) + 2
        let rows = metrics.table().filter { $0.0.app != "total" && $0.0.app != "forger" && $0.1.requests > 0 }
        let cached = rows.allSatisfy { $0.1.tokenFetches >= 1 && $0.1.tokenFetches <= allowed }
        checks.append(("every context fetched 1–\(allowed) tokens, reusing each until near expiry", cached))
        let unexpected = rows.reduce(0) { $0 + $1.1.unauthorized + $1.1.otherFailures }
        checks.append(("no unexpected 401 or failed request (\(unexpected))", unexpected == 0))
        return checks
    }

    // MARK: Output

    var isTerminal: Bool { isatty(1) != 0 }

    func progress(started: ContinuousClock.Instant, trips: Int) async {
        var tick = 0
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
            tick += 1
            guard isTerminal || tick % 5 == 0 else { continue }
            let c = metrics.counters
            let elapsed = (ContinuousClock.now - started).components.seconds
            let line = String(
                format:
                    "[%3ds] updates %d sent / %d accepted   trip snapshots %d   trips complete %d/%d   token fetches %d",
                elapsed, c.sent, c.accepted, c.snapshots, c.finished, trips, c.fetches)
            if isTerminal {
                print("\r" + line, terminator: "")
                fflush(nil)
            } else {
                say(line)
            }
        }
    }

    func printSummary(checks: [(String, Bool)]) {
        let widths = [-10, -18, 8, 8, 5, 5, 7, 8, 8]
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in
                let padding = String(repeating: " ", count: max(abs(width) - cell.count, 0))
                return width < 0 ? cell + padding : padding + cell
            }.joined(separator: " ")
        }
        say("")
        say(line(["app", "context", "requests", "accepted", "401", "403", "tokens", "p50 ms", "p99 ms"]))
        for (key, row) in metrics.table() {
            if key.app == "total" { say(String(repeating: "-", count: 86)) }
            let p50 = row.latencies.percentileMilliseconds(50).map { String(format: "%.2f", $0) } ?? "-"
            let p99 = row.latencies.percentileMilliseconds(99).map { String(format: "%.2f", $0) } ?? "-"
            say(
                line([
                    key.app, key.context, "\(row.requests)", "\(row.accepted)", "\(row.unauthorized)",
                    "\(row.forbidden)", "\(row.tokenFetches)", p50, p99,
                ]))
        }
        let c = metrics.counters
        say("")
        say("Location updates: \(c.sent) sent, \(c.accepted) accepted. Trip snapshots: \(c.snapshots).")
        say("Checks:")
        for (name, passed) in checks { say("  \(passed ? "✔" : "✘") \(name)") }
        let failed = checks.filter { !$0.1 }.count
        say(failed == 0 ? "All \(checks.count) checks passed." : "\(failed) of \(checks.count) checks FAILED.")
    }

    // MARK: Geography

    /// Each vehicle starts on a circle around the center; its trips are legs of `leg` metres each (pickup then
    /// drop-off), sized so that every trip finishes in about 70 % of the run.
    func makePlans() -> [Plan] {
        let tripsPerDriver = Int((Double(consumers) / Double(drivers)).rounded(.up))
        let simulatedSeconds = Double((duration * speed).components.seconds)
        let leg = max(100, 0.7 * simulatedSeconds * Self.velocity / Double(2 * max(tripsPerDriver, 1)))
        var trips = (1...max(consumers, 1)).map { "trip-\($0)" }.prefix(consumers).makeIterator()
        return (1...drivers).map { index in
            let angle = Double(index) / Double(drivers) * 2 * .pi
            let start = Self.offset(Self.center, north: 2000 * cos(angle), east: 2000 * sin(angle))
            var plan = Plan(vehicleID: "vehicle-\(index)", start: start, trips: [])
            var position = start
            for leg_ in 0..<tripsPerDriver {
                guard let id = trips.next() else { break }
                let heading = angle + Double(leg_) * .pi / 2
                let pickup = Self.offset(position, north: leg * cos(heading), east: leg * sin(heading))
                let dropoff = Self.offset(pickup, north: -leg * sin(heading), east: leg * cos(heading))
                plan.trips.append((id, (pickup.latitude, pickup.longitude), (dropoff.latitude, dropoff.longitude)))
                position = dropoff
            }
            return plan
        }
    }

    static func offset(_ point: (latitude: Double, longitude: Double), north: Double, east: Double) -> (
        latitude: Double, longitude: Double
    ) {
        let latitude = point.latitude + north / 111_320
        return (latitude, point.longitude + east / (111_320 * cos(point.latitude * .pi / 180)))
    }

    /// Moves `metres` from `point` towards `target`; whether it arrived.
    static func step(from point: (latitude: Double, longitude: Double), to target: (Double, Double), metres: Double)
        -> ((latitude: Double, longitude: Double), Bool)
    {
        let north = (target.0 - point.latitude) * 111_320
        let east = (target.1 - point.longitude) * 111_320 * cos(point.latitude * .pi / 180)
        let distance = (north * north + east * east).squareRoot()
        if distance <= metres { return ((target.0, target.1), true) }
        return (offset(point, north: north / distance * metres, east: east / distance * metres), false)
    }
}

/// Hands out one token, whatever happens (the demo's forger).
struct FixedTokenProvider: FleetTokenProvider {
    let token: String
    func token(for context: AuthorizationContext) async throws -> String { token }
    func invalidate(_ token: String, for context: AuthorizationContext) {}
}
