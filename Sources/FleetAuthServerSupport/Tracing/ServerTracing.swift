package import Hummingbird
import Instrumentation
import Tracing

/// Tracing in both servers, through swift-distributed-tracing: a span per request (Hummingbird's
/// `TracingMiddleware`, continuing a W3C `traceparent` from the caller), and spans for the steps that matter (verify,
/// mint, sign, store). The tracer is whatever the process bootstrapped — `fleetauth` bootstraps swift-otel's OTLP
/// exporter when `OTEL_EXPORTER_OTLP_ENDPOINT` is set — and with none nothing is added: no middleware, no span.
package enum ServerTracing {
    /// Whether the process bootstrapped a tracer, read once at first use (a server's router is built after the
    /// bootstrap), so a request without tracing pays no lock for the question.
    package static let isOn: Bool = !(InstrumentationSystem.tracer is NoOpTracer)

    /// Adds the request span to `router`, first, so it covers every other middleware; nothing when tracing is off.
    package static func addRequestSpans<Context: RequestContext>(to router: Router<Context>) {
        guard isOn else { return }
        router.add(middleware: TracingMiddleware())
    }

    /// `body` in a child span named `name` when tracing; `body` alone otherwise.
    package static func span<Result>(
        _ name: String,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Result
    ) async rethrows -> Result {
        guard isOn else { return try await body() }
        return try await withSpan(name, isolation: isolation) { _ in try await body() }
    }
}
