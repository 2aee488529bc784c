import ArgumentParser
import FleetAuthCore
import FleetAuthDatabase
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerSupport
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SwiftProtobuf

extension BenchCommand {
    struct Emulator: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "emulator",
            abstract: "Authenticated, persisted UpdateVehicle calls per second over loopback, next to a trivial route.",
            discussion: """
                Run it from a release build: swift run -c release fleetauth bench emulator. It starts, in this \
                process, the emulator (SQLite file in a temporary directory, one driver token per vehicle), the \
                same emulator with its verified-token cache turned off, and a Hummingbird server whose one route \
                answers the same request with `{}`; then drives each with the same closed-loop load (keep-alive \
                connections over loopback, each vehicle's location updated with its own token) in interleaved \
                rounds and reports the best round of each. The emulator's gRPC server gets the same UpdateVehicle \
                calls from grpc-swift clients, with as many calls in flight as REST has connections, next to a \
                trivial gRPC method on the same transport (the gRPC reference, as the trivial route is REST's). \
                When wrk and h2load are installed (Debian: wrk, nghttp2-client) they drive the servers from their \
                own processes, at each level of --in-flight: wrk for REST over HTTP/1.1, h2load for gRPC with a \
                prepared body (one vehicle), GetVehicle beside UpdateVehicle, and PostgreSQL against SQLite under \
                the same whole-fleet load. Otherwise, or with --generator in-process, the load generator runs in \
                this process and shares the machine's cores with the servers.
                """
        )

        @Option(help: "Seconds measured per server in each round.") var seconds: Double = 3
        @Option(help: "Rounds; every figure is the best round.") var rounds: Int = 3
        @Option(help: "Concurrent keep-alive connections.") var connections: Int = 32
        @Option(help: "Distinct vehicles, each with its own driver token.") var vehicles: Int = 1000
        @Option(help: "HTTP/2 connections for the gRPC load (carrying --connections calls in flight between them).")
        var grpcConnections: Int = 2
        @Option(
            help: """
                The load generator: auto (wrk and h2load when both are installed, else this process), external \
                (wrk and h2load, required), in-process.
                """
        )
        var generator: Generator = .auto
        @Option(help: "Calls in flight for the external generators (comma-separated).") var inFlight: String =
            "8,32,64"
        @Flag(help: "Skip the server without a token cache.") var skipUncached = false
        @Flag(help: "Skip UpdateVehicle over gRPC.") var skipGRPC = false
        @Option(
            help:
                "Measure only these servers (comma-separated: trivial, cached, unlogged, get, unlogged-get, postgres, grpc-trivial, grpc, grpc-unlogged, grpc-get, uncached; get, unlogged-get and grpc-get with the external generators), for profiling."
        )
        var only: String?
        @Option(
            help: """
                Also measure UpdateVehicle with vehicles in PostgreSQL (postgres://USER[:PASSWORD]@HOST[:PORT]/DB); \
                the run replaces the vehicles of provider bench-project there.
                """
        )
        var database: String?

        enum Generator: String, ExpressibleByArgument, CaseIterable {
            case auto, external
            case inProcess = "in-process"
        }

        /// The external generators' in-flight levels, if they are to be used.
        var externalLevels: [Int]? {
            get throws {
                let installed = ExternalLoad.find("wrk") != nil && ExternalLoad.find("h2load") != nil
                switch generator {
                case .inProcess: return nil
                case .auto where !installed: return nil
                case .external where !installed:
                    throw ValidationError(
                        "--generator external needs wrk and h2load on PATH (Debian: wrk, nghttp2-client)."
                    )
                default:
                    let levels = inFlight.split(separator: ",").compactMap {
                        Int($0.trimmingCharacters(in: .whitespaces))
                    }
                    guard !levels.isEmpty, levels.allSatisfy({ $0 >= 1 }) else {
                        throw ValidationError("--in-flight takes positive numbers separated by commas.")
                    }
                    return levels
                }
            }
        }

        func validate() throws {
            _ = try externalLevels
            if rounds < 1 || seconds <= 0 || connections < 1 || grpcConnections < 1 || vehicles < connections {
                throw ValidationError(
                    "--rounds, --seconds, --connections, --grpc-connections must be positive; "
                        + "--vehicles ≥ --connections."
                )
            }
        }

        static let provider = "bench-project"

        func run() async throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("fleetauth-bench-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            say("Provisioning service accounts, \(vehicles) vehicles and \(vehicles) driver tokens in \(directory)…")
            let accounts = try DefaultProvisioning.provision(dataDirectory: directory, project: Self.provider)
            guard let driver = accounts.first(where: { $0.role == .driverSdkUser }) else {
                throw BenchmarkFailure("No driver service account was provisioned.")
            }
            let trust = try TrustConfiguration(contentsOf: directory + "/" + DefaultProvisioning.trustFileName)
            let store = try SQLiteFleetStore(path: directory + "/" + EmulatorServer.databaseFileName)
            let minter = try FleetEngineTokenMinter(signer: LocalKeySigner(key: driver.key))
            var tokens: [String] = []
            for index in 0..<vehicles {
                let id = Self.vehicleID(index)
                try await store.insertVehicle(Self.vehicle, provider: Self.provider, id: id)
                tokens.append(try minter.mintSynchronously(.driver(vehicleID: id)).jwt)
            }
            let requests = Self.requests(tokens: tokens, connections: connections)
            try await PostgresPools.withPools { pools in
                var postgresStore: PostgresFleetStore?
                if let database {
                    let url: PostgresURL
                    do {
                        url = try PostgresURL(database)
                        say("Storing \(vehicles) vehicles in PostgreSQL at \(url)…")
                        // The pool `fleetauth emulator` uses, bounded as its calls are.
                        let store = try await PostgresFleetStore.connect(url, limits: .requests, in: pools)
                        try await Self.clear(store)
                        for index in 0..<vehicles {
                            try await store.insertVehicle(
                                Self.vehicle,
                                provider: Self.provider,
                                id: Self.vehicleID(index)
                            )
                        }
                        postgresStore = store
                    } catch let error as StoreError {
                        throw BenchmarkFailure(error.message)
                    }
                }
                var onPostgres: EmulatorServer?
                if let postgresStore { onPostgres = try await EmulatorServer(trust: trust, store: postgresStore) }

                let cached = try await EmulatorServer(trust: trust, store: store)
                // The same emulator with its request log off, the reference for the log's cost.
                let unlogged = try await EmulatorServer(
                    configuration: .init(requestLogCapacity: 0),
                    trust: trust,
                    store: store
                )
                let uncached = try await EmulatorServer(
                    configuration: .init(tokenCacheCapacity: 0, requestLogCapacity: 0),
                    trust: trust,
                    store: store
                )
                let trivial = Router()
                trivial.put("v1/providers/{provider}/vehicles/{vehicle}") { _, _ in "{}" }

                try await withThrowingTaskGroup(of: Void.self) { group in
                    let ports = AsyncStream.makeStream(of: (String, Int).self)
                    let logger = Logger.quiet(label: "fleetauth.bench")
                    var servers: [(String, any ApplicationProtocol)] = [
                        (
                            "trivial",
                            ServerApplication.make(
                                router: trivial,
                                serverName: "bench-trivial",
                                host: "127.0.0.1",
                                port: 0,
                                limits: ServerLimits(),
                                logger: logger
                            ) { ports.continuation.yield(("trivial", $0)) }
                        ),
                        ("cached", cached.application(port: 0) { ports.continuation.yield(("cached", $0)) }),
                        ("unlogged", unlogged.application(port: 0) { ports.continuation.yield(("unlogged", $0)) }),
                    ]
                    if !skipUncached {
                        servers.append(
                            ("uncached", uncached.application(port: 0) { ports.continuation.yield(("uncached", $0)) })
                        )
                    }
                    if let onPostgres {
                        servers.append(
                            ("postgres", onPostgres.application(port: 0) { ports.continuation.yield(("postgres", $0)) })
                        )
                    }
                    var services: [any Service] = servers.map { $0.1 }
                    if !skipGRPC, #available(FleetAuthGRPC , *) {
                        services.append(TrivialGRPCServer { ports.continuation.yield(("grpc-trivial", $0)) })
                        services.append(cached.grpcServer(port: 0) { ports.continuation.yield(("grpc", $0)) })
                        services.append(
                            unlogged.grpcServer(port: 0) { ports.continuation.yield(("grpc-unlogged", $0)) }
                        )
                    }
                    let listeners = services.count
                    // The log's writer, as `fleetauth emulator` runs it, so the logged runs pay for writing too.
                    services += [cached, onPostgres].compactMap { $0?.requestLogService(logger: logger) }
                    let serviceGroup = ServiceGroup(configuration: .init(services: services, logger: logger))
                    group.addTask { try await serviceGroup.run() }
                    var portOf: [String: Int] = [:]
                    for await (name, port) in ports.stream {
                        portOf[name] = port
                        if portOf.count == listeners { break }
                    }
                    if let levels = try externalLevels {
                        try await measureExternally(
                            ports: portOf,
                            levels: levels,
                            tokens: tokens,
                            metrics: cached.metrics,
                            unloggedMetrics: unlogged.metrics,
                            directory: directory
                        )
                    } else {
                        try await measure(ports: portOf, requests: requests, tokens: tokens)
                    }
                    await serviceGroup.triggerGracefulShutdown()
                }
                let chosen = only.map { Set($0.split(separator: ",").map(String.init)) }
                let sqliteMeasured =
                    chosen.map { !$0.isDisjoint(with: ["cached", "unlogged", "uncached", "grpc", "grpc-unlogged"]) }
                    ?? true
                let postgresMeasured = chosen.map { $0.contains("postgres") } ?? true
                for checked in (sqliteMeasured ? [store as any OnDemandStore] : [])
                    + (postgresMeasured ? postgresStore.map { [$0 as any OnDemandStore] } ?? [] : [])
                {
                    guard let sample = try await checked.vehicle(provider: Self.provider, id: Self.vehicleID(0)),
                        sample.lastLocation.hasServerTime
                    else {
                        throw BenchmarkFailure(
                            "The updates were not persisted: vehicle \(Self.vehicleID(0)) has no lastLocation."
                        )
                    }
                }
                if let postgresStore { try await Self.clear(postgresStore) }
            }
        }

        static func vehicleID(_ index: Int) -> String { "vehicle-\(index)" }

        /// Deletes every vehicle of the bench provider (earlier runs' included).
        static func clear(_ store: any OnDemandStore) async throws {
            while true {
                let page = try await store.vehicles(provider: provider, afterID: nil, limit: 500)
                if page.isEmpty { return }
                for vehicle in page { try await store.deleteVehicle(provider: provider, id: vehicle.id) }
            }
        }

        /// The gRPC twin of ``requests(tokens:connections:)``: worker `w` updates vehicles w, w + workers, … with
        /// their own tokens, through UpdateVehicle with the `last_location` mask.
        @available(FleetAuthGRPC, *)
        static func grpcRequests(tokens: [String], workers: Int)
            -> @Sendable (Int, Int) -> (FleetEngineV1.UpdateVehicleRequest, Metadata)
        {
            let metadata: [Metadata] = tokens.map { ["authorization": "Bearer \($0)"] }
            let perWorker = tokens.count / workers
            return { worker, sequence in
                let index = worker + (sequence % perWorker) * workers
                let step = Double(sequence % 1000) * 0.0001
                var request = FleetEngineV1.UpdateVehicleRequest()
                request.name = "providers/\(provider)/vehicles/\(vehicleID(index))"
                request.vehicle.lastLocation.location.latitude = 37.42 + step
                request.vehicle.lastLocation.location.longitude = -122.08 - step
                request.updateMask.paths = ["last_location"]
                return (request, metadata[index])
            }
        }

        static let vehicle: FleetEngineV1.Vehicle = {
            var vehicle = FleetEngineV1.Vehicle()
            vehicle.vehicleState = .online
            vehicle.supportedTripTypes = [.exclusive]
            vehicle.maximumCapacity = 4
            vehicle.vehicleType.category = .auto
            return vehicle
        }()

        /// Connection `c` updates vehicles c, c + connections, …, each with its own token, moving a little each time.
        static func requests(tokens: [String], connections: Int) -> @Sendable (Int, Int) -> LoadGenerator.Request {
            let heads: [(uri: String, headers: HTTPHeaders)] = tokens.indices.map { index in
                let uri = "/v1/providers/\(provider)/vehicles/\(vehicleID(index))?updateMask=last_location"
                let headers: HTTPHeaders = [
                    "Host": "127.0.0.1", "Authorization": "Bearer \(tokens[index])",
                    "Content-Type": "application/json",
                ]
                return (uri, headers)
            }
            let perConnection = tokens.count / connections
            return { connection, sequence in
                let index = connection + (sequence % perConnection) * connections
                let step = Double(sequence % 1000) * 0.0001
                let body = String(
                    format: #"{"lastLocation":{"location":{"latitude":%.6f,"longitude":%.6f}}}"#,
                    37.42 + step,
                    -122.08 - step
                )
                return LoadGenerator.Request(
                    method: .PUT,
                    uri: heads[index].uri,
                    headers: heads[index].headers,
                    body: ByteBuffer(string: body)
                )
            }
        }
    }
}
