import FleetAuthServerCore
import Foundation
import GRPCCore

/// What every gRPC method does: pass the call through ``RPCPipeline`` (the chain REST calls take too) with the
/// `authorization` metadata (`x-goog-request-params` and Google's other metadata are accepted and not needed) and
/// the message decoded only when the pipeline reads it, count the call, and answer a failure with the gRPC status
/// of the same failure over REST, and its message.
@available(FleetAuthGRPC, *)
struct GRPCCall: Sendable {
    let service: FleetEngineService
    /// The Deliveries API.
    let deliveries: DeliveryService
    /// The chain every call passes through, REST's too.
    let pipeline: RPCPipeline

    func run<Input: Sendable, Output: Sendable>(
        _ method: MethodDescriptor,
        _ request: StreamingServerRequest<Input>,
        _ body: (Input, Principal) async throws -> Output
    ) async throws -> ServerResponse<Output> {
        // Resumed after the store's answer on the channel's own loop, so the answer does not cross loops
        // (`fleetauth bench emulator`: gRPC UpdateVehicle +5–28 % at 8 to 64 in flight).
        guard let home = EventLoopTaskExecutor.singleton.homeLoop else {
            return try await handle(method, request, body)
        }
        return try await withTaskExecutorPreference(home) { try await handle(method, request, body) }
    }

    private func handle<Input: Sendable, Output: Sendable>(
        _ method: MethodDescriptor,
        _ request: StreamingServerRequest<Input>,
        _ body: (Input, Principal) async throws -> Output
    ) async throws -> ServerResponse<Output> {
        let route = "/" + method.fullyQualifiedMethod
        do {
            let output = try await pipeline.run(
                method.fullyQualifiedMethod,
                over: .grpc,
                authorization: request.metadata[stringValues: "authorization"].first(where: { _ in true }),
                read: { try await ServerRequest(stream: request).message },
                body
            )
            pipeline.metrics.requestFinished(route: route, status: "OK")
            return ServerResponse(message: output)
        } catch let error as RPCError {
            // The message could not be read: over the size limit, not a valid protobuf message, or not one message.
            pipeline.metrics.requestFinished(route: route, status: Self.statusName(error.code))
            throw error
        } catch {
            let failure = FleetEngineService.apiError(error)
            pipeline.metrics.requestFinished(route: route, status: failure.code.name)
            throw Self.rpcError(failure)
        }
    }

    /// The gRPC status of a failure, with its message.
    static func rpcError(_ error: GoogleAPIError) -> RPCError {
        let code = Status.Code(rawValue: error.code.grpcStatus).flatMap(RPCError.Code.init) ?? .internalError
        return RPCError(code: code, message: error.message)
    }

    /// The canonical name of a gRPC status, as the metrics count it (`RESOURCE_EXHAUSTED`).
    static func statusName(_ code: RPCError.Code) -> String {
        String(describing: code).reduce(into: "") { name, character in
            if character.isUppercase { name += "_" }
            name += character.uppercased()
        }
    }
}

@available(FleetAuthGRPC, *)
extension RPCError: CanonicalFailure {
    var canonicalCode: String { GRPCCall.statusName(code) }
}
