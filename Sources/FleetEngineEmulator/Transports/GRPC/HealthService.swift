import FleetAuthServerSupport
import FleetEngineAPI
import GRPCCore
import NIOConcurrencyHelpers
import SwiftProtobuf

/// gRPC's health checking service, `grpc.health.v1.Health`, as `grpc_health_probe`, Kubernetes' gRPC probes and
/// load balancers call it: the server (service `""`) and each service it offers are SERVING when the emulator is
/// ready (``Readiness``: its store answers and its trusted keys are loaded) and NOT_SERVING otherwise, and every
/// one is NOT_SERVING once the server is shutting down. Other names are NOT_FOUND for Check and SERVICE_UNKNOWN for
/// Watch, which then sends each change until the caller goes away or the server shuts down.
@available(FleetAuthGRPC, *)
struct HealthService: Grpc_Health_V1_Health.SimpleServiceProtocol {
    typealias Status = Grpc_Health_V1_HealthCheckResponse.ServingStatus

    /// The services reported on besides `""`.
    let services: Set<String>
    let readiness: Readiness
    /// How often a Watch looks at readiness again, on the readiness's clock (the injected one).
    let watchInterval: Duration
    /// Set when the server begins shutting down.
    let shuttingDown: NIOLockedValueBox<Bool>

    func status(of service: String) async -> Status? {
        guard service.isEmpty || services.contains(service) else { return nil }
        if shuttingDown.withLockedValue({ $0 }) { return .notServing }
        return await readiness.report().isReady ? .serving : .notServing
    }

    func check(
        request: Grpc_Health_V1_HealthCheckRequest,
        context: ServerContext
    ) async throws -> Grpc_Health_V1_HealthCheckResponse {
        guard let status = await status(of: request.service) else {
            throw RPCError(code: .notFound, message: "No service \(request.service) on this server.")
        }
        return .with { $0.status = status }
    }

    func list(
        request: Grpc_Health_V1_HealthListRequest,
        context: ServerContext
    ) async throws -> Grpc_Health_V1_HealthListResponse {
        let status: Status = await status(of: "") ?? .unknown
        var answer = Grpc_Health_V1_HealthListResponse()
        for service in services.union([""]) { answer.statuses[service] = .with { $0.status = status } }
        return answer
    }

    func watch(
        request: Grpc_Health_V1_HealthCheckRequest,
        response: RPCWriter<Grpc_Health_V1_HealthCheckResponse>,
        context: ServerContext
    ) async throws {
        var last: Status?
        while !Task.isCancelled {
            let status = await status(of: request.service) ?? .serviceUnknown
            if status != last {
                try await response.write(.with { $0.status = status })
                last = status
            }
            // A server shutting down has said NOT_SERVING: end the stream so the shutdown need not wait for it.
            if shuttingDown.withLockedValue({ $0 }) { return }
            try? await readiness.clock.sleep(for: watchInterval)
        }
    }
}
