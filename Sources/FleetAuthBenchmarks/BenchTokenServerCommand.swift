import ArgumentParser
import FleetAuthCore
import FleetAuthJWT
import FleetTokenServer
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

extension BenchCommand {
    struct TokenServer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "token-server",
            abstract: "Driver tokens per second over HTTP from the token server, next to in-process minting.",
            discussion: """
                Run it from a release build: swift run -c release fleetauth bench token-server. In this process it \
                starts the token server (SQLite in a temporary directory), logs a driver in, and drives \
                GET /token/driver/{vehicleId} over loopback keep-alive connections (session check, grant check, \
                RSA signature, audit row per token). In the same run it mints the same tokens in process: on one \
                task (one core) and on one task per core. The target is HTTP ≥ 0.8 × in-process minting on all \
                cores, i.e. per core used.
                """
        )

        @Option(help: "Seconds per measurement in each round.") var seconds: Double = 3
        @Option(help: "Rounds; every figure is the best round.") var rounds: Int = 3
        @Option(help: "Concurrent keep-alive connections.") var connections: Int = 8

        func validate() throws {
            if rounds < 1 || seconds <= 0 || connections < 1 {
                throw ValidationError("--rounds, --seconds and --connections must be positive.")
            }
        }

        func run() async throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("fleetauth-bench-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let store = try SQLiteTokenServerStore(
                path: directory + "/" + FleetTokenServer.TokenServer.databaseFileName)
            let quiet = Logger.quiet(label: "fleetauth.bench")
            let server = try await FleetTokenServer.TokenServer(
                configuration: .init(dataDirectory: directory, project: "bench-project", bcryptCost: 10), store: store)
            let password = "bench password, not a secret"
            try await server.users.addUser(AppUser(username: "driver", role: .driver), password: password)
            for index in 0..<100 { try await server.users.grant(Grant(kind: .vehicle, id: "v\(index)"), to: "driver") }
            let session = try await server.login.login(username: "driver", password: password, address: nil).token
            let minter = try server.keyring.signingKey(for: .driver).minter
            let cores = ProcessInfo.processInfo.activeProcessorCount

            let ports = AsyncStream.makeStream(of: Int.self)
            let application = server.application(port: 0, logger: quiet) {
                ports.continuation.yield($0)
            }
            let group = ServiceGroup(configuration: .init(services: [application], logger: quiet))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var iterator = ports.stream.makeAsyncIterator()
                guard let port = await iterator.next() else {
                    throw BenchmarkFailure("The token server did not start.")
                }
                let headers: HTTPHeaders = ["Host": "127.0.0.1", "Authorization": "Bearer \(session)"]
                let generator = LoadGenerator(host: "127.0.0.1", port: port, connections: connections) { _, sequence in
                    LoadGenerator.Request(
                        method: .GET, uri: "/token/driver/v\(sequence % 100)", headers: headers, body: ByteBuffer())
                }
                var best = (http: LoadGenerator.Result(seconds: 1), one: 0.0, all: 0.0)
                say("Measuring: \(rounds) round(s) of \(seconds) s each; \(connections) connections; \(cores) cores.")
                for round in 1...rounds {
                    let http = try await generator.run(
                        warmUp: .milliseconds(300), duration: .milliseconds(Int64(seconds * 1000)))
                    guard http.successes == http.count, http.count > 0 else {
                        throw BenchmarkFailure("Token requests failed: \(http.statuses)")
                    }
                    let one = try await Self.mintRate(minter, tasks: 1, seconds: seconds)
                    let all = try await Self.mintRate(minter, tasks: cores, seconds: seconds)
                    say(
                        String(
                            format:
                                "  round %d  HTTP %6.0f/s (p50 %.2f ms, p99 %.2f ms)  in-process %6.0f/s on 1 core, %6.0f/s on %d",
                            round, http.rate, http.percentile(0.5), http.percentile(0.99), one, all, cores))
                    if http.rate > best.http.rate { best.http = http }
                    best.one = max(best.one, one)
                    best.all = max(best.all, all)
                }
                await group.triggerGracefulShutdown()
                say("")
                say(String(format: "in-process minting, 1 core            %8.0f tokens/s", best.one))
                say(String(format: "in-process minting, %d cores           %8.0f tokens/s", cores, best.all))
                say(
                    String(
                        format: "HTTP GET /token/driver/{id}           %8.0f tokens/s  p50 %.2f ms  p99 %.2f ms",
                        best.http.rate, best.http.percentile(0.5), best.http.percentile(0.99)))
                say(
                    String(
                        format: "HTTP / in-process on all cores: %.2f (target ≥ 0.80: %@); per core used %.0f vs %.0f",
                        best.http.rate / best.all, best.http.rate / best.all >= 0.8 ? "met" : "NOT met",
                        best.http.rate / Double(cores), best.one))
            }
            let audited = try await store.recentEntries(limit: 1)
            guard audited.first?.username == "driver" else { throw BenchmarkFailure("No token was audited.") }
        }

        /// Driver tokens minted per second by `tasks` concurrent tasks, each minting synchronously.
        static func mintRate(_ minter: FleetEngineTokenMinter, tasks: Int, seconds: Double) async throws -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            let end = start.advanced(by: .milliseconds(Int64(seconds * 1000)))
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<tasks {
                    group.addTask {
                        var count = 0
                        while clock.now < end {
                            _ = try minter.mintSynchronously(.driver(vehicleID: "v\((worker * 7 + count) % 100)"))
                            count += 1
                        }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
            let elapsed = start.duration(to: clock.now)
            return Double(counts) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
    }
}
