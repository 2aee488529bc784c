public import FleetAuthCore
import Prometheus

/// The token server's Prometheus metrics, served to operators at `GET /v1/admin/metrics`:
/// - `fleetauth_tokens_issued_total{endpoint}`: tokens minted, by endpoint (`driver`, `consumer`, …);
/// - `fleetauth_token_requests_refused_total{endpoint,reason}`: token requests refused after authentication:
///   `rate_limited` (429), `not_granted` (403), `signer_failed` (503).
public final class TokenServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// The counters of every endpoint (the server routes those of ``TokenServerEndpoint/all`` only), made once: the
    /// registry's lookup builds the metric's name and labels on every call.
    private let issuedCounters: [TokenServerEndpoint: Counter]
    private let refusedCounters: [TokenServerEndpoint: [Refusal: Counter]]

    /// Why a token request was refused.
    public enum Refusal: String, Sendable, CaseIterable {
        case rateLimited = "rate_limited"
        case notGranted = "not_granted"
        case signerFailed = "signer_failed"
    }

    public init() {
        var issued: [TokenServerEndpoint: Counter] = [:]
        var refused: [TokenServerEndpoint: [Refusal: Counter]] = [:]
        for endpoint in TokenServerEndpoint.all {
            issued[endpoint] = registry.makeCounter(descriptor: Self.issued, labels: [("endpoint", endpoint.name)])
            for refusal in Refusal.allCases {
                refused[endpoint, default: [:]][refusal] = registry.makeCounter(
                    descriptor: Self.refused,
                    labels: [("endpoint", endpoint.name), ("reason", refusal.rawValue)]
                )
            }
        }
        issuedCounters = issued
        refusedCounters = refused
    }

    static var issued: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "fleetauth_tokens_issued",
            unitName: "total",
            helpText: "Tokens minted, by endpoint."
        )
    }
    static var refused: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "fleetauth_token_requests_refused",
            unitName: "total",
            helpText: "Token requests refused after authentication, by endpoint and reason."
        )
    }

    /// Counts a minted token.
    public func issued(_ endpoint: TokenServerEndpoint) {
        issuedCounters[endpoint]?.increment()
    }

    /// Counts a refused token request.
    public func refused(_ endpoint: TokenServerEndpoint, _ refusal: Refusal) {
        refusedCounters[endpoint]?[refusal]?.increment()
    }

    /// The Prometheus text exposition.
    public var text: String { registry.emitToString() }
}
