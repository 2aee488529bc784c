public import FleetAuthCore
import Prometheus

/// The token server's Prometheus metrics, served to operators at `GET /v1/admin/metrics`:
/// - `fleetauth_tokens_issued_total{endpoint}`: tokens minted, by endpoint (`driver`, `consumer`, …);
/// - `fleetauth_token_requests_refused_total{endpoint,reason}`: token requests refused after authentication:
///   `rate_limited` (429), `not_granted` (403), `signer_failed` (503).
public final class TokenServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// Why a token request was refused.
    public enum Refusal: String, Sendable, CaseIterable {
        case rateLimited = "rate_limited"
        case notGranted = "not_granted"
        case signerFailed = "signer_failed"
    }

    public init() {
        for endpoint in TokenServerEndpoint.all {
            _ = registry.makeCounter(descriptor: Self.issued, labels: [("endpoint", endpoint.name)])
            for refusal in Refusal.allCases {
                _ = registry.makeCounter(
                    descriptor: Self.refused,
                    labels: [("endpoint", endpoint.name), ("reason", refusal.rawValue)]
                )
            }
        }
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
        registry.makeCounter(descriptor: Self.issued, labels: [("endpoint", endpoint.name)]).increment()
    }

    /// Counts a refused token request.
    public func refused(_ endpoint: TokenServerEndpoint, _ refusal: Refusal) {
        registry.makeCounter(
            descriptor: Self.refused,
            labels: [("endpoint", endpoint.name), ("reason", refusal.rawValue)]
        ).increment()
    }

    /// The Prometheus text exposition.
    public var text: String { registry.emitToString() }
}
