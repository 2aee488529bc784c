import FleetAuthJWT
import Hummingbird
import NIOConcurrencyHelpers
import Prometheus

/// The emulator's Prometheus metrics:
/// - `fleet_engine_rpcs_total{method,transport,code}`: every Fleet Engine RPC by its full name
///   (`maps.fleetengine.v1.VehicleService/UpdateVehicle`), the transport that brought it (`rest` or `grpc`) and the
///   canonical code it was answered with (`OK`, `PERMISSION_DENIED`), counted once by the RPC pipeline whichever the
///   transport;
/// - `fleet_engine_rpc_duration_seconds{method}`: how long each RPC took, from its arrival at the pipeline to its
///   answer (authentication, reading, the field rules, the access policy and the store);
/// - `fleet_engine_requests_total{route,status}`: what each listener served: requests by REST route pattern and HTTP
///   status (every route: health, metrics and IAM too), and by gRPC method and status name;
/// - `fleet_engine_token_verification_seconds{source}`: time to authenticate a token, `source` = `cache` or
///   `verifier`;
/// - `fleet_engine_request_log_entries_total{outcome}`: the request log's entries `written` to the store, and
///   `dropped` (too many waiting, or the store could not take them);
/// - `fleet_engine_token_rejections_total{reason}`: rejected tokens by verifier reason code — **restricted**.
///
/// Every refused token gets the same 401 message, so that a forger learns nothing from it; counters by reason,
/// read before and after a request, would undo that. So ``publicText`` (what `GET /metrics` answers anyone) leaves
/// them out, and ``text`` (everything) is served only on the metrics listener (`--metrics-port`, loopback by
/// default) and at `GET /metrics` to a caller whose Fleet Engine token may list the whole fleet (a server or
/// fleet-reader token: the fleet console).
public final class EmulatorMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// The restricted metrics.
    let restricted = PrometheusCollectorRegistry()
    private let verifierLatency: DurationHistogram
    private let cacheLatency: DurationHistogram
    private let logWritten: Counter
    private let logDropped: Counter

    public init() {
        let buckets: [Duration] = [
            .microseconds(1), .microseconds(5), .microseconds(10), .microseconds(25), .microseconds(50),
            .microseconds(100), .microseconds(250), .microseconds(1000), .milliseconds(10),
        ]
        verifierLatency = registry.makeDurationHistogram(
            descriptor: Self.verification,
            labels: [("source", "verifier")],
            buckets: buckets
        )
        cacheLatency = registry.makeDurationHistogram(
            descriptor: Self.verification,
            labels: [("source", "cache")],
            buckets: buckets
        )
        logWritten = registry.makeCounter(descriptor: Self.logEntries, labels: [("outcome", "written")])
        logDropped = registry.makeCounter(descriptor: Self.logEntries, labels: [("outcome", "dropped")])
        for code in TokenVerificationError.Code.allCases {
            _ = restricted.makeCounter(descriptor: Self.rejections, labels: [("reason", code.rawValue)])
        }
    }

    static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "fleet_engine_requests",
            unitName: "total",
            helpText: "Requests by route pattern and HTTP status."
        )
    }
    static var rpcs: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "fleet_engine_rpcs",
            unitName: "total",
            helpText: "Fleet Engine RPCs by method, transport and canonical code."
        )
    }
    static var rpcDuration: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "fleet_engine_rpc_duration",
            unitName: "seconds",
            helpText: "Time to answer a Fleet Engine RPC, by method."
        )
    }
    static var logEntries: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "fleet_engine_request_log_entries",
            unitName: "total",
            helpText: "Request log entries written to the store, and dropped."
        )
    }
    static var rejections: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "fleet_engine_token_rejections",
            unitName: "total",
            helpText: "Rejected tokens by verifier reason code."
        )
    }
    static var verification: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "fleet_engine_token_verification",
            unitName: "seconds",
            helpText: "Time to authenticate a bearer token, by source (cache or verifier)."
        )
    }

    /// Counts a rejected token.
    public func tokenRejected(reason: String) {
        restricted.makeCounter(descriptor: Self.rejections, labels: [("reason", reason)]).increment()
    }

    /// Counts request log entries written to the store.
    func requestLogWritten(_ count: Int) { logWritten.increment(by: Int64(count)) }

    /// Counts request log entries dropped.
    func requestLogDropped(_ count: Int) { logDropped.increment(by: Int64(count)) }

    /// Records how long a token check took.
    public func tokenAuthenticated(in duration: Duration, cached: Bool) {
        (cached ? cacheLatency : verifierLatency).record(duration)
    }

    /// Counts a finished request: by HTTP status over REST, by gRPC status name (`OK`, `PERMISSION_DENIED`)
    /// over gRPC, whose routes are the methods' paths.
    func requestFinished(route: String, status: String) {
        let key = RouteStatus(route: route, status: status)
        requestCounters.withLockedValue { counters in
            Self.series(key, in: &counters) {
                registry.makeCounter(descriptor: Self.requests, labels: [("route", route), ("status", status)])
            }
        }
        .increment()
    }

    /// Counts a finished RPC (`method` its full name, `code` the canonical code it was answered with) and records
    /// how long it took.
    func rpcFinished(_ method: String, transport: String, code: String, after duration: Duration) {
        let key = RPCOutcome(method: method, transport: transport, code: code)
        let (counter, histogram) = rpcSeries.withLockedValue { series in
            (
                Self.series(key, in: &series.counters) {
                    registry.makeCounter(descriptor: Self.rpcs, labels: key.labels)
                },
                Self.series(method, in: &series.durations) {
                    registry.makeDurationHistogram(
                        descriptor: Self.rpcDuration,
                        labels: [("method", method)],
                        buckets: Self.rpcBuckets
                    )
                }
            )
        }
        counter.increment()
        histogram.record(duration)
    }

    /// The series of `cache` for `key`, made by `make` the first time. The registry's own lookup (its name and
    /// labels rebuilt and compared on every call) costs more than the count, so each series is looked up here.
    private static func series<Key: Hashable, Series>(
        _ key: Key,
        in cache: inout [Key: Series],
        make: () -> Series
    ) -> Series {
        if let series = cache[key] { return series }
        let series = make()
        cache[key] = series
        return series
    }

    private static let rpcBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .seconds(1),
    ]

    /// An RPC counter's labels.
    private struct RPCOutcome: Hashable {
        let method: String
        let transport: String
        let code: String

        var labels: [(String, String)] { [("method", method), ("transport", transport), ("code", code)] }
    }

    /// The RPC series made so far, bounded as their labels are: the RPCs, two transports and the canonical codes.
    private struct RPCSeries {
        var counters: [RPCOutcome: Counter] = [:]
        var durations: [String: DurationHistogram] = [:]
    }

    private let rpcSeries = NIOLockedValueBox(RPCSeries())

    /// A request counter's labels.
    private struct RouteStatus: Hashable {
        let route: String
        let status: String
    }

    /// The request counters made so far, bounded as their labels are: route patterns and status codes.
    private let requestCounters = NIOLockedValueBox<[RouteStatus: Counter]>([:])

    /// The Prometheus text exposition of every metric, the restricted ones included.
    public var text: String { registry.emitToString() + restricted.emitToString() }

    /// The Prometheus text exposition of the metrics anyone may read: everything but the rejections by reason.
    public var publicText: String { registry.emitToString() }
}

/// Counts every request by its route pattern (bounded label values) and final status, errors included.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: EmulatorMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            let response = try await next(request, context)
            metrics.requestFinished(route: context.endpointPath ?? "unmatched", status: String(response.status.code))
            return response
        } catch let error as any HTTPResponseError {
            metrics.requestFinished(route: context.endpointPath ?? "unmatched", status: String(error.status.code))
            throw error
        } catch {
            metrics.requestFinished(route: context.endpointPath ?? "unmatched", status: "500")
            throw error
        }
    }
}
