import FleetAuthServerCore
import Foundation
import GRPCCore
import SwiftProtobuf

/// A Fleet Engine RPC's call over gRPC: it passes through ``RPCPipeline`` with the `authorization` metadata
/// (`x-goog-request-params` and Google's other metadata are accepted and not needed) and the request message read
/// only when the pipeline asks for it. The call is also counted per route, and a failure is answered with the gRPC
/// status of the same failure over REST, and its message.
@available(FleetAuthGRPC, *)
struct RPCCall: Sendable {
    /// The chain every call passes through.
    let pipeline: RPCPipeline
    /// The largest request message a gRPC method accepts (larger is `RESOURCE_EXHAUSTED`).
    let maximumMessageSize: Int

    /// Runs one call of `method` (a service method that checks the field rules and the access policy).
    func unary<Input: Sendable, Output: Sendable>(
        _ request: StreamingServerRequest<Input>,
        _ context: ServerContext,
        _ method: @Sendable (Input, Principal) async throws -> Output
    ) async throws -> StreamingServerResponse<Output> {
        // Resumed after the store's answer on the channel's own loop, so the answer does not cross loops
        // (`fleetauth bench emulator`: gRPC UpdateVehicle +5–28 % at 8 to 64 in flight).
        guard let home = EventLoopTaskExecutor.singleton.homeLoop else {
            return try await run(request, context, method)
        }
        return try await withTaskExecutorPreference(home) { try await run(request, context, method) }
    }

    private func run<Input: Sendable, Output: Sendable>(
        _ request: StreamingServerRequest<Input>,
        _ context: ServerContext,
        _ method: (Input, Principal) async throws -> Output
    ) async throws -> StreamingServerResponse<Output> {
        let rpc = context.descriptor.fullyQualifiedMethod
        let route = "/" + rpc
        do {
            let output = try await pipeline.run(
                rpc,
                over: .grpc,
                target: Self.routingName(request.metadata[stringValues: "x-goog-request-params"].first { _ in true }),
                authorization: request.metadata[stringValues: "authorization"].first(where: { _ in true }),
                read: { try await ServerRequest(stream: request).message },
                method
            )
            pipeline.metrics.requestFinished(route: route, status: "OK")
            return StreamingServerResponse(single: ServerResponse(message: output))
        } catch let error as RPCError {
            // The message could not be read: over the size limit, not a valid protobuf message, or not one message.
            pipeline.metrics.requestFinished(route: route, status: Self.statusName(error.code))
            throw error
        } catch {
            let failure = OnDemandService.apiError(error)
            pipeline.metrics.requestFinished(route: route, status: failure.code.name)
            throw Self.rpcError(failure)
        }
    }

    /// The gRPC status of a failure, with its message.
    static func rpcError(_ error: GoogleAPIError) -> RPCError {
        let code = Status.Code(rawValue: error.code.grpcStatus).flatMap(RPCError.Code.init) ?? .internalError
        return RPCError(code: code, message: error.message)
    }

    /// The resource name in `x-goog-request-params` (`name=providers%2Fp%2Fvehicles%2Fv1`), decoded.
    static func routingName(_ params: String?) -> String? {
        guard let first = params?.split(separator: "&").first, let equals = first.firstIndex(of: "=") else {
            return nil
        }
        let value = String(first[first.index(after: equals)...])
        return value.removingPercentEncoding ?? value
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
    var canonicalCode: String { RPCCall.statusName(code) }
    var apiError: GoogleAPIError {
        GoogleAPIError(GoogleAPIError.Code.byGRPCStatus[Int(Status.Code(code).rawValue)] ?? .internal, message)
    }
}
