import FleetAuthServerSupport

/// The one chain every Fleet Engine call passes through, whichever transport brought it (a REST route of
/// ``RESTRoutes`` or a gRPC method of ``FleetEngineGRPCService``):
///
/// 1. authenticate the caller from its `authorization` value (steps 1 and 2 of <doc:AuthorizationModel>: the
///    verified-token cache, key refresh, the `verify token` span), before anything of the request is read, so an
///    unauthenticated call's body is never parsed;
/// 2. read the request message, by the transport's own rules and limits (REST's transcoding and body limit, gRPC's
///    size-checked decoding), whose errors pass through as the transport made them;
/// 3. run the RPC's service method, which checks the field rules (``FieldBehaviors``) and then the access policy
///    (steps 3 to 5) before it reads or writes the store;
/// 4. turn any failure of steps 1 and 3 into Google's error: a `GoogleAPIError` as it is, a store's error in Google's
///    terms, anything else `INTERNAL` (``FleetEngineService/apiError(_:)``).
///
/// A transport then writes the answer or the error in its own form, and counts it in its own metrics.
struct RPCPipeline: Sendable {
    let authenticator: TokenAuthenticator
    let refresher: KeyRefresher?

    func run<Input, Output>(
        authorization: String?,
        read: () async throws -> Input,
        _ method: (Input, Principal) async throws -> Output
    ) async throws -> Output {
        let caller: Principal
        do {
            caller = try await ServerTracing.span("verify token") {
                try await authenticator.authenticate(authorization: authorization, refresher: refresher)
            }
        } catch {
            throw FleetEngineService.apiError(error)
        }
        let input = try await read()
        do {
            return try await method(input, caller)
        } catch {
            throw FleetEngineService.apiError(error)
        }
    }
}
