import FleetAuthClient
import FleetAuthCore
import FleetAuthStack
import FleetTokenServer
import Foundation

/// One run of the demo against a running stack: users log in over HTTP like apps, then driver apps report along
/// their routes and consumer apps follow their trips, on an accelerated clock, all through FleetAuthClient.
struct DemoRun: Sendable {
    /// Every demo user's password (the live mode prints it beside the journey-sharing page): one word, as a person
    /// would type it at a login form, and no secret — the demo's accounts exist only on the demo's servers.
    static let password = "fleetauth-demo"

    let scenario: DemoScenario
    let users: any DemoUsers
    let endpoints: LocalStack.Endpoints
    let speed: Double
    let metrics = DemoMetrics()

    /// A logged-in app: its name in the report and its Fleet Engine client.
    struct App: Sendable {
        let name: String
        let client: FleetEngineClient
    }

    /// Provisions the fleet, runs every app until the run's end, and returns what they did.
    func run(progress: DemoReport) async throws -> (dispatcher: App, drivers: [App], consumers: [App], DemoOutcome) {
        let clock = AcceleratedClock(speed: speed)
        let dispatcher = try await app(
            "dispatcher",
            user: scenario.prefix + "dispatcher",
            role: .operator,
            grants: [],
            endpoint: .server
        )
        for vehicle in scenario.vehicles {
            try await dispatcher.client.createVehicle(vehicle.id, DemoScenario.vehicleBody(vehicle))
            for trip in vehicle.trips {
                try await dispatcher.client.createTrip(trip.id, DemoScenario.tripBody(trip, vehicleID: vehicle.id))
            }
        }
        say(
            "Provisioned \(scenario.vehicles.count) vehicles and \(scenario.trips.count) trips; users log in and "
                + "fetch their own tokens."
        )
        var drivers: [App] = []
        for vehicle in scenario.vehicles {
            drivers.append(
                try await app(
                    "driver",
                    user: "driver-\(vehicle.id)",
                    role: .driver,
                    grants: [Grant(kind: .vehicle, id: vehicle.id)],
                    endpoint: .driver
                )
            )
        }
        var consumers: [App] = []
        for trip in scenario.trips {
            consumers.append(
                try await app(
                    "consumer",
                    user: "rider-\(trip.id)",
                    role: .consumer,
                    grants: [Grant(kind: .trip, id: trip.id)],
                    endpoint: .consumer
                )
            )
        }
        let outcome = try await drive(
            dispatcher: dispatcher.client,
            drivers: drivers,
            consumers: consumers,
            clock: clock,
            progress: progress
        )
        return (dispatcher, drivers, consumers, outcome)
    }

    /// Runs the apps concurrently. Consumers get three more polls after the last driver stops, then the run ends.
    private func drive(
        dispatcher: FleetEngineClient,
        drivers: [App],
        consumers: [App],
        clock: AcceleratedClock,
        progress: DemoReport
    ) async throws -> DemoOutcome {
        enum Finished: Sendable {
            case driver(DriverOutcome)
            case consumer(ConsumerOutcome)
            case gracePeriodOver
            case progress
        }
        let deadline = clock.now.advanced(by: scenario.simulatedDuration)
        let trips = scenario.trips
        return try await withThrowingTaskGroup(of: Finished.self) { group in
            for (vehicle, app) in zip(scenario.vehicles, drivers) {
                group.addTask { .driver(try await driver(vehicle, app.client, dispatcher, clock, deadline)) }
            }
            for (trip, app) in zip(trips, consumers) {
                group.addTask { .consumer(await consumer(trip.id, app.client, clock, deadline)) }
            }
            group.addTask {
                await progress.run(metrics: metrics, trips: trips.count)
                return .progress
            }
            var outcome = DemoOutcome()
            while let finished = try await group.next() {
                switch finished {
                case .driver(let driver):
                    outcome.drivers.append(driver)
                    if outcome.drivers.count == drivers.count {
                        group.addTask {
                            try? await clock.sleep(for: .seconds(15))
                            return .gracePeriodOver
                        }
                    }
                case .consumer(let consumer):
                    outcome.consumers.append(consumer)
                case .gracePeriodOver:
                    group.cancelAll()
                case .progress:
                    break
                }
                if outcome.drivers.count == drivers.count && outcome.consumers.count == consumers.count {
                    group.cancelAll()
                }
            }
            return outcome
        }
    }

    /// Creates `user`, logs in over HTTP like an app, and returns a Fleet Engine client whose tokens come from
    /// the token server's `endpoint` with that session.
    func app(_ name: String, user: String, role: AppUserRole, grants: [Grant], endpoint: TokenServerEndpoint)
        async throws -> App
    {
        try await users.add(AppUser(username: user, role: role), password: Self.password, grants: grants)
        let session = try await TokenServerSession.logIn(
            baseURL: URL(string: endpoints.tokenServerURL)!,
            username: user,
            password: Self.password
        )
        let metrics = self.metrics
        // The provider runs on the accelerated clock too, so tokens age (and are refreshed) at the apps' pace.
        let provider = CachingTokenProvider(
            fetcher: session.fetcher(endpoint),
            clock: AcceleratedClock(speed: speed),
            onEvent: { metrics.tokenEvent(app: name, $0) }
        )
        return App(
            name: name,
            client: FleetEngineClient(
                providerID: endpoints.project,
                tokens: provider,
                baseURL: URL(string: endpoints.emulatorURL)!,
                onExchange: { metrics.exchange(app: name, $0) }
            )
        )
    }

    /// A driver app: goes online, drives each trip's route reporting a location every simulated second (the
    /// reporter sends the newest every 10 s), has the dispatcher update the trip's status at pickup and drop-off,
    /// then goes offline.
    private func driver(
        _ vehicle: DemoScenario.Vehicle,
        _ client: FleetEngineClient,
        _ dispatcher: FleetEngineClient,
        _ clock: AcceleratedClock,
        _ deadline: AcceleratedClock.Instant
    ) async throws -> DriverOutcome {
        let reporter = VehicleReporter(client: client, vehicleID: vehicle.id, clock: clock)
        let metrics = self.metrics
        async let reporting: Void = reporter.run()
        async let results: Void = {
            for await report in reporter.results { metrics.update(accepted: report.isAccepted) }
        }()
        var position = vehicle.start
        var last: VehicleLocation?
        var done = 0
        // The dispatcher (a backend with a server token) changes the trip's status, as a driver app's backend does.
        func status(_ tripID: String, _ status: TripStatus) async throws {
            try await dispatcher.updateTrip(
                tripID,
                ["tripStatus": .string(status.rawValue)],
                updateMask: ["trip_status"]
            )
        }
        // A vehicle moves by the simulated time that passed, not by loop turns: on a loaded machine a 1-second sleep
        // can take several, and the route must still be driven in the time the scenario planned for it.
        func move(to target: Coordinate) async throws -> Bool {
            var tick = clock.now
            while clock.now < deadline {
                let now = clock.now
                let (seconds, attoseconds) = tick.duration(to: now).components
                let elapsed = max(1, Double(seconds) + Double(attoseconds) / 1e18)
                tick = now
                let step = position.step(towards: target, metres: DemoScenario.velocity * elapsed)
                position = step.position
                let location = VehicleLocation(
                    latitude: position.latitude,
                    longitude: position.longitude,
                    heading: 0,
                    speed: DemoScenario.velocity
                )
                reporter.report(location)
                last = location
                if step.arrived { return true }
                try await clock.sleep(for: .seconds(1))
            }
            return false
        }
        reporter.goOnline()
        for trip in vehicle.trips {
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
        return DriverOutcome(
            vehicleID: vehicle.id,
            lastLocation: last,
            tripsDone: done,
            tripsPlanned: vehicle.trips.count
        )
    }

    /// A consumer app: follows its trip until it ends (or the run does).
    private func consumer(
        _ tripID: String,
        _ client: FleetEngineClient,
        _ clock: AcceleratedClock,
        _ deadline: AcceleratedClock.Instant
    ) async -> ConsumerOutcome {
        let tracker = TripTracker(client: client, tripID: tripID, clock: clock)
        var statuses: [TripStatus] = []
        var sawVehicle = false
        var sawWaypoints = false
        var failure: String?
        do {
            for try await snapshot in tracker.snapshots() {
                metrics.snapshot(finished: snapshot.isFinished)
                if statuses.last != snapshot.status { statuses.append(snapshot.status) }
                if snapshot.vehicleLocation != nil { sawVehicle = true }
                if !snapshot.remainingWaypoints.isEmpty { sawWaypoints = true }
                if clock.now > deadline { break }
            }
        } catch {
            failure = "\(error)"
        }
        return ConsumerOutcome(
            tripID: tripID,
            statuses: statuses,
            sawVehicle: sawVehicle,
            sawWaypoints: sawWaypoints,
            error: failure
        )
    }
}
