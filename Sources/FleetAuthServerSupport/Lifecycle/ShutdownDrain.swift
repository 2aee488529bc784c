package import FleetAuthCore
import NIOConcurrencyHelpers
package import ServiceLifecycle

/// The first step of a server's shutdown, in the order load balancers expect: on SIGTERM the server first reports
/// not ready (`/readyz` 503 naming `shutdown`, gRPC health NOT_SERVING) for a drain period while it still answers
/// every request, so a balancer that probes it stops sending it traffic; only then do its listeners stop accepting
/// and in-flight requests get their grace.
///
/// One per server: ``component`` goes into its ``Readiness``, and ``service(period:clock:)`` runs as the **last**
/// service of its `ServiceGroup`, which shuts services down in reverse order, each after the one behind it has
/// returned. The drain therefore ends before any listener begins to close.
package final class ShutdownDrain: Sendable {
    private let draining = NIOLockedValueBox(false)

    package init() {}

    /// Whether the drain has begun (it never ends: the server is stopping).
    package var isDraining: Bool { draining.withLockedValue { $0 } }

    /// The readiness component that fails from the moment the drain begins.
    package var component: Readiness.Component {
        .init("shutdown") { [draining] in
            draining.withLockedValue { $0 } ? "the server is shutting down; send requests to another instance" : nil
        }
    }

    /// Reports not ready from the moment the server is asked to stop gracefully.
    package func begin() {
        draining.withLockedValue { $0 = true }
    }

    /// A service that waits for the group's graceful shutdown, begins the drain, and returns after `period` (at once
    /// when the period is zero, or when the group cancels it).
    package func service(period: Duration, clock: any WallClock = .system) -> some Service {
        DrainService(drain: self, period: period, clock: clock)
    }
}

private struct DrainService: Service, CustomStringConvertible {
    let drain: ShutdownDrain
    let period: Duration
    let clock: any WallClock

    var description: String { "the shutdown drain" }

    func run() async throws {
        // Wait for the graceful shutdown (or cancellation, which ends the wait by throwing).
        do {
            try await gracefulShutdown()
        } catch {
            return
        }
        drain.begin()
        guard period > .zero else { return }
        // Cancellation (a second signal, the group's own limit) ends the drain early, which is what it asks.
        try? await clock.sleep(for: period)
    }
}
