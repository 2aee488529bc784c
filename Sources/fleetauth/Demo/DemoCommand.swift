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
            tokenServer: .init(dataDirectory: directory, bcryptCost: 4, tokenLifetime: DemoScenario.tokenLifetime))
        let scenario = DemoScenario(
            drivers: drivers, consumers: consumers, simulatedDuration: .seconds(duration) * speed)
        let passed = try await stack.run { endpoints in
            say(
                "Token server: \(endpoints.tokenServerURL)   Fleet Engine emulator: \(endpoints.emulatorURL)"
                    + (endpoints.emulatorGRPCAddress.map { " (gRPC \($0))" } ?? ""))
            let run = DemoRun(scenario: scenario, users: stack.tokenServer.users, endpoints: endpoints, speed: speed)
            let report = DemoReport()
            let (dispatcher, driverApps, consumerApps, outcome) = try await run.run(progress: report)
            report.endProgress()
            let checks =
                try await run.chainChecks(drivers: driverApps, consumers: consumerApps)
                + run.outcomeChecks(outcome, dispatcher: dispatcher)
            return report.summary(metrics: run.metrics, checks: checks)
        }
        if !passed { throw ExitCode(1) }
    }
}
