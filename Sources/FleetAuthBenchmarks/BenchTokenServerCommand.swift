import ArgumentParser
import FleetAuthCore
import FleetAuthDatabase
import FleetAuthJWT
import FleetAuthServerCore
import FleetTokenServer
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
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
                task (one core) and on one task per core, and loads the same server's GET /healthz the same way: \
                the floor a request costs there. From these it prints the ceiling, what tokens would reach if each \
                cost its signature and the floor and nothing else, and the CPU each token spends beyond both. The \
                target is HTTP ≥ 0.8 × in-process minting on all cores, i.e. per core used.
                """
        )

        @Option(help: "Seconds per measurement in each round.") var seconds: Double = 3
        @Option(help: "Rounds; every figure is the best round.") var rounds: Int = 3
        @Option(help: "Concurrent keep-alive connections.") var connections: Int = 8
        @Option(
            help: """
                Also measure with the state in PostgreSQL (postgres://USER[:PASSWORD]@HOST[:PORT]/DB): the benchmark \
                creates a database of its own on that server (the user needs CREATEDB) and drops it afterwards.
                """
        )
        var database: String?
        @Option(
            help: """
                The HTTP load generator: auto (wrk when installed, else this process), external (wrk, required), \
                in-process.
                """
        )
        var generator: BenchCommand.Emulator.Generator = .auto

        /// Whether wrk drives the HTTP load.
        var usesWrk: Bool {
            get throws {
                let installed = ExternalLoad.find("wrk") != nil
                switch generator {
                case .inProcess: return false
                case .auto: return installed
                case .external:
                    guard installed else {
                        throw ValidationError("--generator external needs wrk on PATH (Debian: wrk).")
                    }
                    return true
                }
            }
        }

        func validate() throws {
            _ = try usesWrk
            if rounds < 1 || seconds <= 0 || connections < 1 {
                throw ValidationError("--rounds, --seconds and --connections must be positive.")
            }
        }

        /// One token server under test: its store, a logged-in driver's session, and its port once listening.
        struct Backend {
            let name: String
            let server: FleetTokenServer.TokenServer
            let store: any TokenServerStorage
            let session: String
        }

        static func backend(_ name: String, store: any TokenServerStorage, directory: String) async throws -> Backend {
            let server = try await FleetTokenServer.TokenServer(
                configuration: .init(
                    dataDirectory: directory,
                    project: "bench-project",
                    keyEncryptionKey: .generate(),
                    bcryptCost: 10,
                    // The benchmark is one user minting as fast as it can: what the rate limit exists to stop.
                    mintRate: .unlimited
                ),
                store: store
            )
            let password = "bench password, not a secret"
            try await server.users.addUser(AppUser(username: "driver", role: .driver), password: password)
            for index in 0..<100 { try await server.users.grant(Grant(kind: .vehicle, id: "v\(index)"), to: "driver") }
            let session = try await server.login.login(username: "driver", password: password, address: nil).token
            return Backend(name: name, server: server, store: store, session: session)
        }

        func run() async throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("fleetauth-bench-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let backends = [
                try await Self.backend(
                    "SQLite",
                    store: try SQLiteTokenServerStore(
                        path: directory + "/" + FleetTokenServer.TokenServer.databaseFileName
                    ),
                    directory: directory + "/sqlite"
                )
            ]
            guard let database else { return try await measure(backends) }
            let admin: PostgresURL
            do {
                admin = try PostgresURL(database)
            } catch {
                throw BenchmarkFailure(error.message)
            }
            try await admin.withTemporaryDatabase(prefix: "fleetauth_bench_tokens") { url in
                // The pool `fleetauth token-server` uses.
                try await PostgresTokenServerStore.withConnected(url) { store in
                    say("PostgreSQL: a temporary database \(url.database) on \(url.location)")
                    try await measure(
                        backends + [
                            try await Self.backend("PostgreSQL", store: store, directory: directory + "/postgres")
                        ]
                    )
                }
            }
        }

        func measure(_ backends: [Backend]) async throws {
            let quiet = Logger.quiet(label: "fleetauth.bench")
            let (minter, _) = try backends[0].server.keyring.minter(for: .driver)
            let cores = ProcessInfo.processInfo.activeProcessorCount
            let ports = AsyncStream.makeStream(of: (Int, Int).self)
            let applications = backends.enumerated().map { index, backend in
                backend.server.application(port: 0, logger: quiet) { ports.continuation.yield((index, $0)) }
            }
            let group = ServiceGroup(configuration: .init(services: applications, logger: quiet))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var iterator = ports.stream.makeAsyncIterator()
                var generators = [LoadGenerator?](repeating: nil, count: backends.count)
                var portOf = [Int](repeating: 0, count: backends.count)
                for _ in backends {
                    guard let (index, port) = await iterator.next() else {
                        throw BenchmarkFailure("A token server did not start.")
                    }
                    portOf[index] = port
                    let headers: HTTPHeaders = [
                        "Host": "127.0.0.1", "Authorization": "Bearer \(backends[index].session)",
                    ]
                    generators[index] = LoadGenerator(host: "127.0.0.1", port: port, connections: connections) {
                        _,
                        sequence in
                        LoadGenerator.Request(
                            method: .GET,
                            uri: "/token/driver/v\(sequence % 100)",
                            headers: headers,
                            body: ByteBuffer()
                        )
                    }
                }
                // The floor: the same server's cheapest route (`/healthz`, through the same middleware), loaded the
                // same way. A token can cost no less than signing it plus this.
                let floorRequest = LoadGenerator.Request(
                    method: .GET,
                    uri: "/healthz",
                    headers: ["Host": "127.0.0.1"],
                    body: ByteBuffer()
                )
                let floorGenerator = LoadGenerator(host: "127.0.0.1", port: portOf[0], connections: connections) {
                    _,
                    _ in floorRequest
                }
                let wrk = try usesWrk
                var best = [ExternalLoad.Result](
                    repeating: ExternalLoad.Result(rate: 0, p50: 0, p99: 0, requests: 0, failures: 0),
                    count: backends.count
                )
                var one = 0.0
                var all = 0.0
                var floor = 0.0
                say(
                    "Measuring: \(rounds) round(s) of \(seconds) s each; \(connections) connections; \(cores) cores; "
                        + (wrk
                            ? "HTTP load from wrk."
                            : "HTTP load from this process (install wrk to measure the server alone).")
                )
                for round in 1...rounds {
                    var line = String(format: "  round %d", round)
                    for (index, generator) in generators.enumerated() {
                        guard let generator else { continue }
                        let http = try await load(
                            wrk: wrk,
                            port: portOf[index],
                            targets: (0..<100).map {
                                ExternalLoad.Target(
                                    path: "/token/driver/v\($0)",
                                    headers: [("Authorization", "Bearer \(backends[index].session)")]
                                )
                            },
                            generator: generator,
                            what: "token requests on \(backends[index].name)"
                        )
                        line += String(
                            format: "  HTTP on %@ %6.0f/s (p99 %.2f ms)",
                            backends[index].name,
                            http.rate,
                            http.p99
                        )
                        if http.rate > best[index].rate { best[index] = http }
                    }
                    let roundFloor = try await load(
                        wrk: wrk,
                        port: portOf[0],
                        targets: [ExternalLoad.Target(path: "/healthz", headers: [])],
                        generator: floorGenerator,
                        what: "GET /healthz"
                    )
                    line += String(format: "  /healthz %6.0f/s", roundFloor.rate)
                    floor = max(floor, roundFloor.rate)
                    let roundOne = try await Self.mintRate(minter, tasks: 1, seconds: seconds)
                    let roundAll = try await Self.mintRate(minter, tasks: cores, seconds: seconds)
                    say(
                        line
                            + String(format: "  in-process %6.0f/s on 1 core, %6.0f/s on %d", roundOne, roundAll, cores)
                    )
                    one = max(one, roundOne)
                    all = max(all, roundAll)
                }
                await group.triggerGracefulShutdown()
                say("")
                say(String(format: "in-process minting, 1 core                      %8.0f tokens/s", one))
                say(String(format: "in-process minting, %d cores                     %8.0f tokens/s", cores, all))
                for (index, backend) in backends.enumerated() {
                    let http = best[index]
                    say(
                        String(
                            format: "HTTP GET /token/driver/{id}, %@ %8.0f tokens/s  p50 %.2f ms  p99 %.2f ms",
                            backend.name.padding(toLength: 19, withPad: " ", startingAt: 0),
                            http.rate,
                            http.p50,
                            http.p99
                        )
                    )
                }
                say(String(format: "GET /healthz, the same server's floor          %8.0f requests/s", floor))
                // Both share the machine: a token that cost only its signature and the floor would take
                // 1/all + 1/floor seconds of the whole machine.
                let ceiling = 1 / (1 / all + 1 / floor)
                say(
                    String(
                        format: "ceiling (signing + the floor, nothing else)   %8.0f tokens/s = %.2f × in-process",
                        ceiling,
                        ceiling / all
                    )
                )
                for (index, backend) in backends.enumerated() {
                    let beyond = Double(cores) * (1 / best[index].rate - 1 / ceiling) * 1e6
                    say(
                        String(
                            format:
                                "%@: %.0f µs of CPU per token beyond both (its database server's included)",
                            backend.name,
                            beyond
                        )
                    )
                }
                for (index, backend) in backends.enumerated() {
                    let ratio = best[index].rate / all
                    say(
                        String(
                            format: "%@: HTTP / in-process on all cores %.2f (target ≥ 0.80: %@)",
                            backend.name,
                            ratio,
                            ratio >= 0.8 ? "met" : "NOT met"
                        )
                    )
                }
                if best.count == 2 {
                    let ratio = best[1].rate / best[0].rate
                    say(
                        String(
                            format: "%@ / %@: %.2f (target ≥ 0.80: %@)",
                            backends[1].name,
                            backends[0].name,
                            ratio,
                            ratio >= 0.8 ? "met" : "NOT met"
                        )
                    )
                }
            }
            for backend in backends {
                let audited = try await backend.store.recentEntries(limit: 1)
                guard audited.first?.username == "driver" else {
                    throw BenchmarkFailure("No token was audited on \(backend.name).")
                }
            }
        }

        /// One HTTP measurement of `seconds`: wrk over `targets` when `wrk`, else `generator` in this process. Throws
        /// if any request failed.
        func load(
            wrk: Bool,
            port: Int,
            targets: [ExternalLoad.Target],
            generator: LoadGenerator,
            what: String
        ) async throws -> ExternalLoad.Result {
            guard wrk else {
                let result = try await generator.run(
                    warmUp: .milliseconds(300),
                    duration: .milliseconds(Int64(seconds * 1000))
                )
                guard result.successes == result.count, result.count > 0 else {
                    throw BenchmarkFailure("\(what) failed: \(result.statuses)")
                }
                return ExternalLoad.Result(
                    rate: result.rate,
                    p50: result.percentile(0.5),
                    p99: result.percentile(0.99),
                    requests: result.count,
                    failures: 0
                )
            }
            let result = try await ExternalLoad.wrk(
                base: "http://127.0.0.1:\(port)",
                method: "GET",
                targets: targets,
                body: "",
                connections: connections,
                seconds: seconds,
                directory: FileManager.default.temporaryDirectory.path
            )
            guard result.failures == 0, result.requests > 0 else {
                throw BenchmarkFailure("\(result.failures) of \(result.requests) \(what) failed.")
            }
            return result
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
