import FleetEngineAPI
import GRPCCore
import GRPCNIOTransportHTTP2

/// A closed-loop gRPC load generator over loopback: `concurrency` workers spread over `connections` HTTP/2
/// connections (grpc-swift clients), each sending its next UpdateVehicle as soon as the previous answer arrived.
/// Results use ``LoadGenerator/Result``: status 200 for OK, 600 + the gRPC code otherwise.
@available(FleetAuthGRPC, *)
struct GRPCLoadGenerator {
    let host: String
    let port: Int
    let connections: Int
    let concurrency: Int
    /// Builds the `sequence`-th call of worker `worker`: the request and its metadata.
    let makeRequest: @Sendable (_ worker: Int, _ sequence: Int) -> (FleetEngineV1.UpdateVehicleRequest, Metadata)

    /// Runs for `warmUp` (not counted), then measures for `duration`.
    func run(warmUp: Duration, duration: Duration) async throws -> LoadGenerator.Result {
        let clients = try (0..<connections).map { _ in
            GRPCClient(
                transport: try HTTP2ClientTransport.Posix(
                    target: .ipv4(address: host, port: port),
                    transportSecurity: .plaintext
                )
            )
        }
        return try await withThrowingTaskGroup(of: LoadGenerator.Result?.self) { group in
            for client in clients {
                group.addTask {
                    try await client.runConnections()
                    return nil
                }
            }
            let clock = ContinuousClock()
            let start = clock.now + warmUp
            let end = start + duration
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            let makeRequest = self.makeRequest
            let results = try await withThrowingTaskGroup(of: LoadGenerator.Result.self) { workers in
                for worker in 0..<concurrency {
                    let service = FleetEngineV1.VehicleService.Client(wrapping: clients[worker % clients.count])
                    workers.addTask {
                        var result = LoadGenerator.Result(seconds: seconds)
                        var sequence = 0
                        while clock.now < end {
                            let (request, metadata) = makeRequest(worker, sequence)
                            sequence += 1
                            let began = clock.now
                            var status = 200
                            do {
                                _ = try await service.updateVehicle(request, metadata: metadata)
                            } catch let error as RPCError {
                                status = 600 + error.code.rawValue
                            }
                            let finished = clock.now
                            if began >= start, finished <= end {
                                result.statuses[status, default: 0] += 1
                                let elapsed = began.duration(to: finished).components
                                result.latencies.append(
                                    UInt64(elapsed.seconds) * 1_000_000_000
                                        + UInt64(elapsed.attoseconds / 1_000_000_000)
                                )
                            }
                        }
                        return result
                    }
                }
                var total = LoadGenerator.Result(seconds: seconds)
                for try await result in workers { total.merge(result) }
                return total
            }
            for client in clients { client.beginGracefulShutdown() }
            for try await _ in group {}
            return results
        }
    }
}
