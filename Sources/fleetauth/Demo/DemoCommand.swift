import ArgumentParser
import FleetAuthClient
import FleetAuthCore
import FleetAuthStack
import FleetEngineEmulator
import FleetTokenServer
import Foundation
import UnixSignals

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
            along routes) and consumer apps (TripTracker) through FleetAuthClient on an accelerated clock; then \
            the delivery half: couriers' apps (DeliveryVehicleReporter) driving routes of parcels planned by a \
            dispatcher, and recipients' tracking pages (ShipmentTracker). Ends with a summary table and a list of \
            checks; exits 1 if any check failed, and 130 if Ctrl-C (or SIGTERM) stopped it before the checks ended.

            With --token-server and --emulator it runs the same apps and checks against servers already running \
            (a deployed pair, or instances behind a load balancer): users are created through the token server's \
            admin API as an operator (password in FLEETAUTH_OPERATOR_PASSWORD or --operator-password-file), and \
            every vehicle, trip and user name gets a fresh run prefix so runs do not collide.
            """
    )

    @Option(help: "Simulated driver apps (one vehicle each).") var drivers: Int = 4
    @Option(help: "Simulated consumer apps (one trip each, shared out among the drivers).") var consumers: Int = 4
    @Option(help: "Simulated delivery courier apps (one delivery vehicle each).") var deliveryDrivers: Int = 2
    @Option(help: "Parcels (one delivery task and tracking page each, shared out among the couriers).")
    var shipments: Int = 4
    @Option(help: "Run time in seconds.") var duration: Int = 30
    @Option(help: "How much faster than real time the apps' clock runs.") var speed: Double = 20
    @Option(help: "Keep the servers' data in this directory (default: a temporary one, removed afterwards).")
    var data: String?
    @Option(help: "Run against this token server (base URL) instead of starting one; needs --emulator.")
    var tokenServer: String?
    @Option(help: "Run against this Fleet Engine (emulator) REST base URL; needs --token-server.")
    var emulator: String?
    @Option(help: "With external servers: the Fleet Engine provider (project) of the token server's keys.")
    var project: String = "demo-project"
    @Option(help: "With external servers: the operator account that creates the demo's users.")
    var operatorUser: String = "operator"
    @Option(help: "With external servers: a file holding the operator's password (else FLEETAUTH_OPERATOR_PASSWORD).")
    var operatorPasswordFile: String?
    @Flag(
        help: """
            After the checks, keep the servers up and the simulated fleet moving (a new round of trips each \
            --duration) until Ctrl-C, and print the fleet console's and a trip page's URLs with logins.
            """
    )
    var keep = false

    func validate() throws {
        guard deliveryDrivers >= 0, shipments >= 0, deliveryDrivers > 0 || shipments == 0 else {
            throw ValidationError("--delivery-drivers and --shipments must not be negative; parcels need a courier.")
        }
        if (tokenServer == nil) != (emulator == nil) {
            throw ValidationError("--token-server and --emulator go together.")
        }
        for url in [tokenServer, emulator].compactMap({ $0 }) where URL(string: url)?.host == nil {
            throw ValidationError("\(url) is not an http(s) URL.")
        }
        if tokenServer != nil, data != nil { throw ValidationError("--data is for the local servers only.") }
        if tokenServer != nil, keep { throw ValidationError("--keep is for the local servers only.") }
        if !(1...200).contains(drivers) { throw ValidationError("--drivers must be between 1 and 200.") }
        if !(0...1000).contains(consumers) { throw ValidationError("--consumers must be between 0 and 1000.") }
        if !(5...3600).contains(duration) { throw ValidationError("--duration must be between 5 and 3600 seconds.") }
        if !(1...120).contains(speed) { throw ValidationError("--speed must be between 1 and 120.") }
    }

    func run() async throws {
        // Ctrl-C or SIGTERM stops the demo in every phase. The signals are trapped rather than left to their default
        // action, which a shell that started the demo in the background has set to "ignore".
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let outcome: Bool?
        if let tokenServer, let emulator {
            outcome = try await Self.cancelling(on: signals) {
                try await runExternal(tokenServer: tokenServer, emulator: emulator)
            }
        } else {
            outcome = try await runLocal(cancellingOn: signals)
        }
        switch outcome {
        case .some(true): return
        case .some(false): throw ExitCode(1)
        case .none:
            say("Interrupted before the checks finished.")
            throw ExitCode(130)
        }
    }

    /// Runs `work` until it returns, or until one of `signals` arrives and cancels it. Returns what `work` returned
    /// (`--keep` returns its verdict once cancelled), or nil if it ended by throwing after a signal.
    static func cancelling<Value: Sendable>(
        on signals: UnixSignalsSequence,
        _ work: @escaping @Sendable () async throws -> Value
    ) async throws -> Value? {
        try await withThrowingTaskGroup(of: Value?.self, returning: Value?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                for await _ in signals { return nil }
                return nil
            }
            defer { group.cancelAll() }
            if case .some(.some(let value)) = try await group.next() { return value }
            group.cancelAll()
            do { return try await group.next() ?? nil } catch { return nil }
        }
    }

    /// The demo against a local stack; true if every check passed, nil if a signal interrupted the checks. The
    /// signals cancel the apps only, so the servers still shut down gracefully.
    func runLocal(cancellingOn signals: UnixSignalsSequence) async throws -> Bool? {
        let directory =
            data
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("fleetauth-demo-\(UUID().uuidString)")
            .path
        defer { if data == nil { try? FileManager.default.removeItem(atPath: directory) } }
        say("FleetAuth demo: \(drivers) driver apps, \(consumers) consumer apps, \(duration) s at \(Int(speed))× speed")
        say("Data: \(directory)\(data == nil ? " (removed afterwards)" : "")")
        let stack = try await LocalStack(
            dataDirectory: directory,
            tokenServer: .init(
                dataDirectory: directory,
                bcryptCost: 4,
                tokenLifetime: DemoScenario.tokenLifetime,
                // The apps' clock runs `speed` times faster, and so do their token refreshes.
                mintRate: .init(perMinute: 6 * speed)
            )
        )
        let scenario = DemoScenario(
            drivers: drivers,
            consumers: consumers,
            simulatedDuration: .seconds(duration) * speed
        )
        let users = stack.tokenServer.users
        return try await stack.run { endpoints in
            say(
                "Token server: \(endpoints.tokenServerURL)   Fleet Engine emulator: \(endpoints.emulatorURL)"
                    + (endpoints.emulatorGRPCAddress.map { " (gRPC \($0))" } ?? "")
            )
            return try await Self.cancelling(on: signals) {
                let passed = try await Self.play(
                    scenario,
                    users: users,
                    endpoints: endpoints,
                    speed: speed,
                    vans: deliveryDrivers,
                    shipments: shipments
                )
                if keep {
                    try await keepRunning(users, endpoints)
                    say("Stopped.")
                }
                return passed
            }
        }
    }

    /// `--keep`: new rounds of the same fleet until the task is cancelled (by SIGINT or SIGTERM), with the pages'
    /// URLs and logins printed.
    func keepRunning(_ users: UserDirectory, _ endpoints: LocalStack.Endpoints) async throws {
        let operatorPassword = UserDirectory.generatePassword()
        try await users.addUser(
            AppUser(username: "console", role: .operator),
            password: operatorPassword
        )
        say("")
        say("Keeping the fleet running; Ctrl-C stops it.")
        say("Fleet console:   \(endpoints.tokenServerURL)/app/console   (console / \(operatorPassword))")
        var round = 1
        while !Task.isCancelled {
            let scenario = DemoScenario(
                drivers: drivers,
                consumers: max(consumers, 1),
                simulatedDuration: .seconds(duration) * speed,
                prefix: "live\(round)-"
            )
            let trip = scenario.trips[0].id
            say(
                "Round \(round): journey sharing at \(endpoints.tokenServerURL)/app/trip/\(trip)   "
                    + "(log in as rider-\(trip), password \(DemoRun.password))"
            )
            let run = DemoRun(scenario: scenario, users: users, endpoints: endpoints, speed: speed)
            let report = DemoReport()
            do {
                _ = try await run.run(progress: report)
            } catch  where Task.isCancelled {
                // Whatever the interrupted round was waiting on, cancellation is the end asked for.
            }
            report.endProgress()
            round += 1
        }
    }

    /// The same apps and checks against servers already running.
    func runExternal(tokenServer: String, emulator: String) async throws -> Bool {
        let password: String
        if let operatorPasswordFile {
            guard let data = FileManager.default.contents(atPath: operatorPasswordFile) else {
                throw CLIError("Cannot read \(operatorPasswordFile).")
            }
            password = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        } else if let value = ProcessInfo.processInfo.environment["FLEETAUTH_OPERATOR_PASSWORD"], !value.isEmpty {
            password = value
        } else {
            throw CLIError(
                "With --token-server, give the operator's password in FLEETAUTH_OPERATOR_PASSWORD or --operator-password-file."
            )
        }
        let trim = { (url: String) in url.hasSuffix("/") ? String(url.dropLast()) : url }
        let endpoints = LocalStack.Endpoints(
            emulatorURL: trim(emulator),
            emulatorGRPCAddress: nil,
            tokenServerURL: trim(tokenServer),
            project: project
        )
        let prefix = "run" + UUID().uuidString.prefix(8).lowercased() + "-"
        say("FleetAuth demo: \(drivers) driver apps, \(consumers) consumer apps, \(duration) s at \(Int(speed))× speed")
        say("Token server: \(endpoints.tokenServerURL)   Fleet Engine: \(endpoints.emulatorURL)   names: \(prefix)*")
        let users = try await AdminAPIUsers.logIn(
            baseURL: URL(string: endpoints.tokenServerURL)!,
            username: operatorUser,
            password: password
        )
        let scenario = DemoScenario(
            drivers: drivers,
            consumers: consumers,
            simulatedDuration: .seconds(duration) * speed,
            prefix: prefix
        )
        return try await Self.play(
            scenario,
            users: users,
            endpoints: endpoints,
            speed: speed,
            vans: deliveryDrivers,
            shipments: shipments
        )
    }

    /// Runs the apps, then the checks; prints the summary and returns whether every check passed.
    static func play(
        _ scenario: DemoScenario,
        users: any DemoUsers,
        endpoints: LocalStack.Endpoints,
        speed: Double,
        vans: Int,
        shipments: Int
    ) async throws -> Bool {
        let run = DemoRun(scenario: scenario, users: users, endpoints: endpoints, speed: speed)
        let report = DemoReport()
        let (dispatcher, driverApps, consumerApps, outcome) = try await run.run(progress: report)
        report.endProgress()
        let deliveryChecks = try await run.deliveries(vans: vans, shipments: shipments)
        let checks =
            try await run.chainChecks(drivers: driverApps, consumers: consumerApps)
            + run.outcomeChecks(outcome, dispatcher: dispatcher) + deliveryChecks
        let passed = report.summary(metrics: run.metrics, checks: checks)
        await Self.sayRequestLog(emulatorURL: endpoints.emulatorURL, vehicle: scenario.vehicles.first?.id)
        return passed
    }

    /// How many entries the emulator's request log holds from the run (its `/metrics`), and a query to read them by.
    static func sayRequestLog(emulatorURL: String, vehicle: String?) async {
        guard let url = URL(string: emulatorURL + "/metrics"),
            let (data, _) = try? await URLSession.shared.cancellationSafeData(for: URLRequest(url: url))
        else { return }
        let prefix = #"fleet_engine_request_log_entries_total{outcome="written"} "#
        guard
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first(where: {
                $0.hasPrefix(prefix)
            }),
            let written = Double(line.dropFirst(prefix.count))
        else { return }
        say("")
        say(
            "Request log: \(Int(written)) entries, one per Fleet Engine call, each with why it was allowed or refused "
                + "(POST \(emulatorURL)/v2/entries:list, or fleetauth logs). For example:"
        )
        say(
            "  fleetauth logs --emulator \(emulatorURL) --token SERVER_TOKEN 'labels.vehicle_id=\"\(vehicle ?? "v1")\" AND severity>=WARNING'"
        )
    }
}
