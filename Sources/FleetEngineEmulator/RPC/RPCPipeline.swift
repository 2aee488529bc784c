import FleetAuthServerCore
import FleetAuthServerSupport

/// The one chain every Fleet Engine call passes through, whichever transport brought it (a REST route of
/// ``RESTRoutes`` or a gRPC method of ``FleetEngineGRPCService``), on its way to the RPC's one implementation
/// (``FleetEngineRPCs``):
///
/// 1. authenticate the caller from its `authorization` value (steps 1 and 2 of <doc:AuthorizationModel>: the
///    verified-token cache, key refresh, the `verify token` span), before anything of the request is read, so an
///    unauthenticated call's body is never parsed;
/// 2. read the request message, by the transport's own rules and limits (REST's transcoding and body limit, gRPC's
///    size-checked decoding), whose errors pass through as the transport made them;
/// 3. run the RPC's service method, which checks the field rules (``FieldBehaviors``) and then the access policy
///    (steps 3 to 5) before it reads or writes the store;
/// 4. turn any failure of steps 1 and 3 into Google's error: a `GoogleAPIError` as it is, a store's error in Google's
///    terms, anything else `INTERNAL` (``OnDemandService/apiError(_:)``);
/// 5. count the call by RPC, transport and canonical code, and time it by RPC (``EmulatorMetrics``:
///    `fleet_engine_rpcs_total`, `fleet_engine_rpc_duration_seconds`), so one series answers "how is UpdateVehicle
///    doing" whichever transport the apps use.
///
/// A transport then writes the answer or the error in its own form. What is the transport's own stays with it: the
/// request span (an HTTP server span over REST, an RPC server span over gRPC, each continuing the caller's
/// `traceparent`) and the per-listener request count (`fleet_engine_requests_total`), which also cover the routes and
/// gRPC services that are not Fleet Engine RPCs (health, metrics, reflection, the IAM stand-in).
struct RPCPipeline: Sendable {
    let authenticator: TokenAuthenticator
    let refresher: KeyRefresher?
    let metrics: EmulatorMetrics

    /// The transports, as the metrics label them.
    enum Transport: String, Sendable {
        case rest
        case grpc
    }

    /// Runs one call of `rpc` (`maps.fleetengine.v1.VehicleService/UpdateVehicle`) that came over `transport`.
    func run<Input, Output>(
        _ rpc: String,
        over transport: Transport,
        authorization: String?,
        read: () async throws -> Input,
        _ method: (Input, Principal) async throws -> Output
    ) async throws -> Output {
        let start = ContinuousClock.now
        do {
            let output = try await serve(authorization: authorization, read: read, method)
            metrics.rpcFinished(rpc, transport: transport.rawValue, code: "OK", after: start.duration(to: .now))
            return output
        } catch {
            let code = (error as? any CanonicalFailure)?.canonicalCode ?? GoogleAPIError.Code.internal.name
            metrics.rpcFinished(rpc, transport: transport.rawValue, code: code, after: start.duration(to: .now))
            throw error
        }
    }

    private func serve<Input, Output>(
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
            throw OnDemandService.apiError(error)
        }
        let input = try await read()
        do {
            return try await method(input, caller)
        } catch {
            throw OnDemandService.apiError(error)
        }
    }
}

/// A failure that names its canonical status (`PERMISSION_DENIED`): Google's error, and each transport's own errors
/// for a request it could not read (gRPC's `RPCError`).
protocol CanonicalFailure: Error {
    var canonicalCode: String { get }
}

extension GoogleAPIError: CanonicalFailure {
    var canonicalCode: String { code.name }
}
