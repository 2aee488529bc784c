import FleetAuthServerCore
import FleetAuthServerSupport
import SwiftProtobuf

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
    /// Where each call leaves its record (``RequestLog``), when the log is on.
    let requestLog: RequestLog?

    init(
        authenticator: TokenAuthenticator,
        refresher: KeyRefresher?,
        metrics: EmulatorMetrics,
        requestLog: RequestLog? = nil
    ) {
        self.authenticator = authenticator
        self.refresher = refresher
        self.metrics = metrics
        self.requestLog = requestLog
    }

    /// The transports, as the metrics label them.
    enum Transport: String, Sendable {
        case rest
        case grpc
    }

    /// Runs one call of `rpc` (`maps.fleetengine.v1.VehicleService/UpdateVehicle`) that came over `transport`;
    /// `target` is what the transport saw of the resource before the request was read (the REST path, gRPC's
    /// `x-goog-request-params`), for the request log of a call whose request is never read.
    func run<Input, Output>(
        _ rpc: String,
        over transport: Transport,
        target: String? = nil,
        authorization: String?,
        read: () async throws -> Input,
        _ method: (Input, Principal) async throws -> Output
    ) async throws -> Output {
        let start = ContinuousClock.now
        let record = requestLog.map {
            RequestLogRecord(rpc: rpc, transport: transport, target: target, received: $0.now)
        }
        do {
            let output: Output
            if record != nil {
                let recorder = AccessCheckRecorder()
                output = try await AccessCheckRecorder.$current.withValue(recorder) {
                    defer { record?.accessChecks = recorder.all }
                    return try await serve(authorization: authorization, read: read, method, record: record)
                }
                record?.response = output as? any SwiftProtobuf.Message
            } else {
                output = try await serve(authorization: authorization, read: read, method, record: nil)
            }
            metrics.rpcFinished(rpc, transport: transport.rawValue, code: "OK", after: start.duration(to: .now))
            if let record { requestLog?.record(record) }
            return output
        } catch {
            let code = (error as? any CanonicalFailure)?.canonicalCode ?? GoogleAPIError.Code.internal.name
            metrics.rpcFinished(rpc, transport: transport.rawValue, code: code, after: start.duration(to: .now))
            if let record {
                record.error =
                    (error as? any CanonicalFailure)?.apiError ?? .internal("The call failed inside the emulator.")
                requestLog?.record(record)
            }
            throw error
        }
    }

    private func serve<Input, Output>(
        authorization: String?,
        read: () async throws -> Input,
        _ method: (Input, Principal) async throws -> Output,
        record: RequestLogRecord?
    ) async throws -> Output {
        let caller: Principal
        var reason: String?
        do {
            caller = try await ServerTracing.span("verify token") {
                try await authenticator.authenticate(
                    authorization: authorization,
                    refresher: refresher,
                    rejected: { reason = $0 }
                )
            }
        } catch {
            // Optional chaining evaluates the right-hand sides only when the log is on.
            record?.tokenRejection = reason
            record?.refusedToken = authorization.flatMap(TokenAuthenticator.bearerToken)
            throw OnDemandService.apiError(error)
        }
        record?.caller = caller
        let input = try await read()
        record?.request = input as? any SwiftProtobuf.Message
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
    /// The failure as Google's error, as the request log writes it.
    var apiError: GoogleAPIError { get }
}

extension GoogleAPIError: CanonicalFailure {
    var canonicalCode: String { code.name }
    var apiError: GoogleAPIError { self }
}

extension GoogleAPIError.Code {
    /// The canonical codes, by gRPC status number.
    static let byGRPCStatus: [Int: Self] = Dictionary(
        [
            .cancelled, .invalidArgument, .deadlineExceeded, .notFound, .alreadyExists, .permissionDenied,
            .resourceExhausted, .failedPrecondition, .aborted, .outOfRange, .unimplemented, .internal, .unavailable,
            .unauthenticated,
        ].map { ($0.grpcStatus, $0) },
        uniquingKeysWith: { first, _ in first }
    )
}
