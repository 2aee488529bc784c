import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import SwiftProtobuf

extension BenchCommand.Emulator {
    /// One measured server at one level of calls in flight.
    private struct Run: Hashable {
        var name: String
        var inFlight: Int
    }

    /// The servers driven from outside this process: REST by wrk (one call in flight per HTTP/1.1 connection),
    /// gRPC by h2load (HTTP/2 connections each carrying several streams), at each level of calls in flight, in
    /// interleaved rounds; prints the best round of each and the ratios.
    ///
    /// h2load sends one prepared body, so every gRPC call updates vehicle 0 with its driver token; the REST runs
    /// compared with it do the same, and the PostgreSQL run (where one row would measure lock contention) cycles
    /// through every vehicle with its own token.
    func measureExternally(
        ports: [String: Int],
        levels: [Int],
        tokens: [String],
        metrics: EmulatorMetrics,
        unloggedMetrics: EmulatorMetrics,
        directory: String
    ) async throws {
        let chosen = only.map { Set($0.split(separator: ",").map(String.init)) }
        // GetVehicle and the whole-fleet REST run (PostgreSQL's reference) go to the SQLite emulator's port.
        var ports = ports
        ports["get"] = ports["cached"]
        ports["grpc-get"] = ports["grpc"]
        ports["unlogged-get"] = ports["unlogged"]
        if ports["postgres"] != nil { ports["fleet"] = ports["cached"] }
        let order = [
            "trivial", "cached", "unlogged", "get", "unlogged-get", "fleet", "postgres", "grpc-trivial", "grpc",
            "grpc-unlogged", "grpc-get", "uncached",
        ]
        .filter {
            ports[$0] != nil && chosen?.contains($0) ?? true
        }
        let path = "/v1/providers/\(Self.provider)/vehicles/\(Self.vehicleID(0))?updateMask=last_location"
        let json = #"{"lastLocation":{"location":{"latitude":37.42,"longitude":-122.08}}}"#
        let oneVehicle = [
            ExternalLoad.Target(
                path: path,
                headers: [("Authorization", "Bearer \(tokens[0])"), ("Content-Type", "application/json")]
            )
        ]
        let read = [
            ExternalLoad.Target(
                path: "/v1/providers/\(Self.provider)/vehicles/\(Self.vehicleID(0))",
                headers: [("Authorization", "Bearer \(tokens[0])")]
            )
        ]
        let fleet = tokens.indices.map { index in
            ExternalLoad.Target(
                path: "/v1/providers/\(Self.provider)/vehicles/\(Self.vehicleID(index))?updateMask=last_location",
                headers: [("Authorization", "Bearer \(tokens[index])"), ("Content-Type", "application/json")]
            )
        }
        var request = FleetEngineV1.UpdateVehicleRequest()
        request.name = "providers/\(Self.provider)/vehicles/\(Self.vehicleID(0))"
        request.vehicle.lastLocation.location.latitude = 37.42
        request.vehicle.lastLocation.location.longitude = -122.08
        request.updateMask.paths = ["last_location"]
        let bodyFile = directory + "/update-vehicle.grpc"
        try Data(ExternalLoad.grpcFrame(try request.serializedBytes())).write(to: URL(fileURLWithPath: bodyFile))
        var get = FleetEngineV1.GetVehicleRequest()
        get.name = request.name
        let getBodyFile = directory + "/get-vehicle.grpc"
        try Data(ExternalLoad.grpcFrame(try get.serializedBytes())).write(to: URL(fileURLWithPath: getBodyFile))
        let grpcHeaders = [
            ("content-type", "application/grpc"), ("te", "trailers"), ("authorization", "Bearer \(tokens[0])"),
        ]
        let grpcMethods = [
            "grpc": "UpdateVehicle", "grpc-unlogged": "UpdateVehicle", "grpc-get": "GetVehicle",
            "grpc-trivial": "UpdateVehicle",
        ]

        say(
            "Measuring with external generators (wrk for REST over HTTP/1.1, h2load for gRPC): "
                + "\(levels.map(String.init).joined(separator: ", ")) calls in flight, \(rounds) round(s) of "
                + "\(seconds) s per server."
        )
        var best: [Run: ExternalLoad.Result] = [:]
        // Every round's rate, so that a ratio can be taken between runs a few seconds apart.
        var rates: [Run: [Double]] = [:]
        for round in 1...rounds {
            for level in levels {
                // Every other round runs the servers in reverse, so neither of a pair always goes first.
                for name in round % 2 == 0 ? order.reversed() : order {
                    let result: ExternalLoad.Result
                    if name.hasPrefix("grpc") {
                        // 2 to 8 connections, as a pool of channels would open.
                        let clients = min(8, max(2, level / 8))
                        let method = grpcMethods[name]!
                        let metrics = name == "grpc-unlogged" ? unloggedMetrics : metrics
                        let failedBefore = Self.failedGRPCCalls(method, metrics)
                        result = try await ExternalLoad.h2load(
                            url: "http://127.0.0.1:\(ports[name]!)/maps.fleetengine.v1.VehicleService/\(method)",
                            headers: grpcHeaders,
                            bodyFile: name == "grpc-get" ? getBodyFile : bodyFile,
                            clients: min(clients, level),
                            streams: max(1, level / min(clients, level)),
                            seconds: seconds,
                            directory: directory
                        )
                        let failed = Self.failedGRPCCalls(method, metrics) - failedBefore
                        if name != "grpc-trivial", failed > 0 {
                            throw BenchmarkFailure("\(name): \(failed) \(method) calls did not answer OK.")
                        }
                    } else {
                        let reads = name.hasSuffix("get")
                        result = try await ExternalLoad.wrk(
                            base: "http://127.0.0.1:\(ports[name]!)",
                            method: reads ? "GET" : "PUT",
                            targets: reads ? read : name == "postgres" || name == "fleet" ? fleet : oneVehicle,
                            body: reads ? "" : json,
                            connections: level,
                            seconds: seconds,
                            directory: directory
                        )
                    }
                    if !name.hasSuffix("trivial"), result.failures > 0 {
                        throw BenchmarkFailure("\(name): \(result.failures) of \(result.requests) updates failed.")
                    }
                    say(
                        String(
                            format: "  round %d  %3d in flight  %-12@ %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms",
                            round,
                            level,
                            name,
                            result.rate,
                            result.p50,
                            result.p99
                        )
                    )
                    let run = Run(name: name, inFlight: level)
                    if result.rate > best[run]?.rate ?? 0 { best[run] = result }
                    rates[run, default: []].append(result.rate)
                }
            }
        }
        let labels = [
            "trivial": "trivial Hummingbird route (wrk)",
            "cached": "UpdateVehicle, REST (wrk)",
            "unlogged": "UpdateVehicle, REST, request log off (wrk)",
            "get": "GetVehicle, REST (wrk)",
            "unlogged-get": "GetVehicle, REST, request log off (wrk)",
            "fleet": "UpdateVehicle, REST, SQLite (wrk, every vehicle)",
            "postgres": "UpdateVehicle, REST, PostgreSQL (wrk, every vehicle)",
            "grpc-trivial": "trivial gRPC method (h2load)",
            "grpc": "UpdateVehicle, gRPC (h2load)",
            "grpc-unlogged": "UpdateVehicle, gRPC, request log off (h2load)",
            "grpc-get": "GetVehicle, gRPC (h2load)",
            "uncached": "UpdateVehicle, REST, no token cache (wrk)",
        ]
        say("")
        say("server (best of \(rounds))                              in flight     req/s   p50 ms   p99 ms")
        for level in levels {
            for name in order {
                guard let result = best[Run(name: name, inFlight: level)] else { continue }
                say(
                    labels[name]!.padding(toLength: 56, withPad: " ", startingAt: 0)
                        + String(format: "%9d %9.0f %8.2f %8.2f", level, result.rate, result.p50, result.p99)
                )
            }
        }
        say("")
        for level in levels {
            func rate(_ name: String) -> Double? { best[Run(name: name, inFlight: level)]?.rate }
            var parts: [String] = []
            if let rest = rate("cached"), let trivial = rate("trivial") {
                parts.append(String(format: "REST / trivial route %.2f (target ≥ 0.60)", rest / trivial))
            }
            if let grpc = rate("grpc"), let rest = rate("cached") {
                parts.append(String(format: "gRPC / REST %.2f (target ≥ 1.00)", grpc / rest))
            }
            if let grpc = rate("grpc"), let trivial = rate("grpc-trivial") {
                parts.append(String(format: "gRPC / trivial gRPC %.2f", grpc / trivial))
            }
            if let trivial = rate("grpc-trivial"), let rest = rate("cached") {
                // The most gRPC / REST could be if the emulator's handler cost nothing.
                parts.append(String(format: "trivial gRPC / REST %.2f", trivial / rest))
            }
            // The log's cost: the median of the rounds' ratios, each between two runs seconds apart (the best
            // rates' ratio pairs runs of different rounds, which a disturbance of a few seconds moves by a tenth).
            var logFigures: [String] = []
            for (label, on, off) in [
                ("REST", "cached", "unlogged"), ("gRPC", "grpc", "grpc-unlogged"),
                ("GetVehicle", "get", "unlogged-get"),
            ] {
                guard let on = rates[Run(name: on, inFlight: level)], let off = rates[Run(name: off, inFlight: level)]
                else { continue }
                let ratios = zip(on, off).map { $0 / $1 }
                logFigures.append(
                    String(format: "%@ %.2f", label, Self.median(ratios)) + " (rounds "
                        + ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ") + ")"
                )
            }
            if !logFigures.isEmpty {
                parts.append(
                    "request log on / off, median of rounds: " + logFigures.joined(separator: ", ") + " (target ≥ 0.90)"
                )
            }
            if let get = rate("get"), let rest = rate("cached") {
                parts.append(String(format: "GetVehicle / UpdateVehicle %.2f (target ≥ 1.00)", get / rest))
            }
            if let get = rate("grpc-get"), let grpc = rate("grpc") {
                parts.append(String(format: "GetVehicle / UpdateVehicle over gRPC %.2f", get / grpc))
            }
            if let postgres = rate("postgres"), let rest = rate("fleet") {
                parts.append(
                    String(
                        format: "PostgreSQL %.0f/s = %.2f × SQLite (target ≥ 0.50, ≥ 2,000/s)",
                        postgres,
                        postgres / rest
                    )
                )
            }
            if let uncached = rate("uncached"), let rest = rate("cached") {
                parts.append(String(format: "token cache speed-up %.2f", rest / uncached))
            }
            say("\(level) in flight: " + parts.joined(separator: "; "))
        }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Calls of a VehicleService `method` over gRPC that the emulator answered with a status other than OK, from its
    /// RPC counts (`fleet_engine_rpcs_total`).
    static func failedGRPCCalls(_ method: String, _ metrics: EmulatorMetrics) -> Int {
        var failed = 0
        for line in metrics.text.split(separator: "\n")
        where line.hasPrefix("fleet_engine_rpcs_total{") && line.contains("VehicleService/\(method)\"")
            && line.contains("transport=\"grpc\"") && !line.contains("code=\"OK\"")
        {
            failed += Int(line.split(separator: " ").last.map { Double($0) ?? 0 } ?? 0)
        }
        return failed
    }
}
