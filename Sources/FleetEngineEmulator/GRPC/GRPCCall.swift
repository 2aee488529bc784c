import FleetAuthServerSupport
import Foundation
import GRPCCore

/// What every gRPC method does around ``FleetEngineService``: authenticate the caller from the `authorization`
/// metadata (the same verifier, cache and key refresh as REST; `x-goog-request-params` and Google's other
/// metadata are accepted and not needed), run the method, count the call, and answer a failure with the gRPC
/// status of the same failure over REST, and its message.
@available(FleetAuthGRPC, *)
struct GRPCCall: Sendable {
    let service: FleetEngineService
    let authenticator: TokenAuthenticator
    let refresher: KeyRefresher?
    let metrics: EmulatorMetrics

    func run<Input: Sendable, Output: Sendable>(
        _ method: String,
        _ request: ServerRequest<Input>,
        _ body: (Input, Principal) async throws -> Output
    ) async throws -> ServerResponse<Output> {
        let route = "/maps.fleetengine.v1.\(method)"
        do {
            let authorization = request.metadata[stringValues: "authorization"].first(where: { _ in true })
            let caller = try await authenticator.authenticate(authorization: authorization, refresher: refresher)
            let output = try await body(request.message, caller)
            metrics.requestFinished(route: route, status: "OK")
            return ServerResponse(message: output)
        } catch {
            let failure = FleetEngineService.apiError(error)
            metrics.requestFinished(route: route, status: failure.code.name)
            throw Self.rpcError(failure)
        }
    }

    /// The gRPC status of a failure, with its message.
    static func rpcError(_ error: GoogleAPIError) -> RPCError {
        let code = Status.Code(rawValue: error.code.grpcStatus).flatMap(RPCError.Code.init) ?? .internalError
        return RPCError(code: code, message: error.message)
    }
}
