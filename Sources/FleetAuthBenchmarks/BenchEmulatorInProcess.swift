import Foundation

extension BenchCommand.Emulator {
    /// Interleaved rounds over the servers; prints the best round of each and the ratios.
    func measure(
        ports: [String: Int],
        requests: @escaping @Sendable (Int, Int) -> LoadGenerator.Request,
        tokens: [String]
    ) async throws {
        let chosen = only.map { Set($0.split(separator: ",").map(String.init)) }
        let order = [
            "trivial", "cached", "unlogged", "postgres", "grpc-trivial", "grpc", "grpc-unlogged", "uncached",
        ].filter {
            ports[$0] != nil && chosen?.contains($0) ?? true
        }
        var best: [String: LoadGenerator.Result] = [:]
        say(
            "Measuring: \(connections) connections, \(vehicles) vehicles, "
                + "\(rounds) round(s) of \(seconds) s per server (load generator in this process, sharing its "
                + "cores: install wrk and h2load to measure the servers alone)."
        )
        for round in 1...rounds {
            for name in order {
                let warmUp = Duration.milliseconds(500)
                let duration = Duration.milliseconds(Int64(seconds * 1000))
                let result: LoadGenerator.Result
                if name.hasPrefix("grpc"), #available(FleetAuthGRPC , *) {
                    result = try await GRPCLoadGenerator(
                        host: "127.0.0.1",
                        port: ports[name]!,
                        connections: grpcConnections,
                        concurrency: connections,
                        makeRequest: Self.grpcRequests(tokens: tokens, workers: connections)
                    ).run(warmUp: warmUp, duration: duration)
                } else {
                    result = try await LoadGenerator(
                        host: "127.0.0.1",
                        port: ports[name]!,
                        connections: connections,
                        makeRequest: requests
                    ).run(warmUp: warmUp, duration: duration)
                }
                let failures = result.count - result.successes
                if !name.hasSuffix("trivial") && failures > 0 {
                    throw BenchmarkFailure(
                        "\(name): \(failures) of \(result.count) updates failed: \(result.statuses)"
                    )
                }
                say(
                    String(
                        format: "  round %d  %-9@ %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms",
                        round,
                        name,
                        result.rate,
                        result.percentile(0.5),
                        result.percentile(0.99)
                    )
                )
                if result.rate > best[name]?.rate ?? 0 { best[name] = result }
            }
        }
        let labels = [
            "trivial": "trivial Hummingbird route (same request)",
            "cached": "UpdateVehicle, verified-token cache",
            "unlogged": "UpdateVehicle, token cache, request log off",
            "postgres": "UpdateVehicle on PostgreSQL, token cache",
            "grpc-trivial": "trivial gRPC method (same call)",
            "grpc": "UpdateVehicle over gRPC, verified-token cache",
            "grpc-unlogged": "UpdateVehicle over gRPC, request log off",
            "uncached": "UpdateVehicle, RSA verification every call",
        ]
        say("")
        say("route (best of \(rounds))                                    req/s   p50 ms   p99 ms")
        for name in order {
            guard let result = best[name] else { continue }
            say(
                labels[name]!.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + String(
                        format: "%9.0f %8.2f %8.2f",
                        result.rate,
                        result.percentile(0.5),
                        result.percentile(0.99)
                    )
            )
        }
        guard let trivialRate = best["trivial"]?.rate, let cachedRate = best["cached"]?.rate else { return }
        say("")
        say(
            String(
                format:
                    "UpdateVehicle / trivial route: %.2f (target ≥ 0.50: %@); %.0f updates/s (target ≥ 2,000: %@)",
                cachedRate / trivialRate,
                cachedRate / trivialRate >= 0.5 ? "met" : "NOT met",
                cachedRate,
                cachedRate >= 2000 ? "met" : "NOT met"
            )
        )
        if let postgresRate = best["postgres"]?.rate {
            say(
                String(
                    format: "UpdateVehicle on PostgreSQL: %.0f updates/s (target ≥ 2,000: %@), %.2f × SQLite's",
                    postgresRate,
                    postgresRate >= 2000 ? "met" : "NOT met",
                    postgresRate / cachedRate
                )
            )
        }
        if let grpcRate = best["grpc"]?.rate {
            say(
                String(
                    format: "UpdateVehicle over gRPC / over REST: %.2f (target ≥ 1.00: %@)",
                    grpcRate / cachedRate,
                    grpcRate >= cachedRate ? "met" : "NOT met"
                )
            )
            if let trivialGRPC = best["grpc-trivial"]?.rate {
                say(
                    String(
                        format:
                            "UpdateVehicle over gRPC / trivial gRPC method: %.2f; trivial gRPC / trivial REST: %.2f",
                        grpcRate / trivialGRPC,
                        trivialGRPC / trivialRate
                    )
                )
            }
        }
        if let unloggedRate = best["unlogged"]?.rate {
            var figures = String(format: "REST %.2f", cachedRate / unloggedRate)
            if let grpcRate = best["grpc"]?.rate, let off = best["grpc-unlogged"]?.rate {
                figures += String(format: ", gRPC %.2f", grpcRate / off)
            }
            say("UpdateVehicle with the request log on / off: \(figures) (target ≥ 0.90)")
        }
        if let uncachedRate = best["uncached"]?.rate {
            say(
                String(
                    format: "Token cache speed-up: %.2f × the rate with an RSA verification per call",
                    cachedRate / uncachedRate
                )
            )
        }
    }
}
