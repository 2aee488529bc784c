package import FleetAuthCore
import FleetAuthServerCore
package import Hummingbird
import NIOConcurrencyHelpers

/// What a load balancer or a Kubernetes probe asks a server: `GET /healthz` (the process serves: always 200) and
/// `GET /readyz` (200 only when every component can do its job; otherwise 503 naming each failing one).
///
/// The components are checked at every `/readyz`, concurrently, each within ``timeout`` (a database that hangs is
/// failing, not a probe that hangs). Both answers are JSON and never cached:
///
/// ```json
/// {"status": "not ready", "components": {"store": {"status": "failing", "error": "…"}, "signing": {"status": "ok"}}}
/// ```
package struct Readiness: Sendable {
    /// One thing the server needs: its name in the answer, and a check that throws (or returns a problem) when
    /// it cannot do its job.
    package struct Component: Sendable {
        package var name: String
        /// nil when the component works; otherwise what is wrong, in words.
        package var check: @Sendable () async -> String?

        package init(_ name: String, check: @escaping @Sendable () async -> String?) {
            self.name = name
            self.check = check
        }

        /// A component that works when `probe` returns, and fails with the error's words when it throws.
        package static func probing(_ name: String, _ probe: @escaping @Sendable () async throws -> Void) -> Self {
            Self(name) {
                do {
                    try await probe()
                    return nil
                } catch {
                    return String(describing: error)
                }
            }
        }
    }

    /// Each component's state: nil when it works.
    package struct Report: Sendable {
        package var components: [(name: String, problem: String?)]
        package var isReady: Bool { components.allSatisfy { $0.problem == nil } }

        package var json: JSONObject {
            var components = JSONObject()
            for component in self.components {
                components[component.name] =
                    if let problem = component.problem {
                        .object(["status": "failing", "error": .string(problem)])
                    } else {
                        .object(["status": "ok"])
                    }
            }
            return ["status": isReady ? "ready" : "not ready", "components": .object(components)]
        }
    }

    package var components: [Component]
    /// How long one component may take to answer before it counts as failing.
    package var timeout: Duration
    /// The clock ``timeout`` is counted on.
    package var clock: any WallClock

    /// The default ``timeout``: under the 1 s after which orchestrators' probes give up by default (Kubernetes
    /// `timeoutSeconds: 1`, Cloud Run's startup and liveness probes), so they see the 503 and its reason.
    package static let defaultTimeout: Duration = .milliseconds(800)

    package init(
        _ components: [Component],
        timeout: Duration = Readiness.defaultTimeout,
        clock: any WallClock = .system
    ) {
        self.components = components
        self.timeout = timeout
        self.clock = clock
    }

    /// Checks every component at once.
    package func report() async -> Report {
        let timeout = self.timeout
        let clock = self.clock
        let problems = await withTaskGroup(of: (Int, String?).self) { group in
            for (index, component) in components.enumerated() {
                group.addTask { (index, await Self.check(component, within: timeout, on: clock)) }
            }
            var problems = [String?](repeating: nil, count: components.count)
            for await (index, problem) in group { problems[index] = problem }
            return problems
        }
        return Report(components: zip(components, problems).map { ($0.name, $1) })
    }

    /// The component's problem, or a timeout's: a check that hangs (a database that does not answer) is left
    /// running on its own, never awaited by the probe.
    private static func check(_ component: Component, within timeout: Duration, on clock: any WallClock) async
        -> String?
    {
        let answered = NIOLockedValueBox(false)
        return await awaitHandOff { (deliver: @escaping @Sendable (Result<String?, Never>) -> Void) in
            let finish: @Sendable (String?) -> Void = { problem in
                let first = answered.withLockedValue { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { deliver(.success(problem)) }
            }
            let timer = Task {
                try await clock.sleep(for: timeout)
                finish("no answer within \(timeout)")
            }
            Task {
                finish(await component.check())
                timer.cancel()
            }
        }
    }

    /// Serves `GET /healthz` and `GET /readyz` on `router`.
    package func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("healthz") { _, _ in JSONResponse.make(["status": "ok"]) }
        router.get("readyz") { _, _ in
            let report = await report()
            return JSONResponse.make(report.json, status: report.isReady ? .ok : .serviceUnavailable)
        }
    }
}
