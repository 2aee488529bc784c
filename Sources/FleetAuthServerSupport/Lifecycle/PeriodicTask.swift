package import FleetAuthCore
import FleetAuthServerCore
package import Logging
import ServiceLifecycle

/// Work repeated at a fixed interval on an injected clock, as a service: it ends on graceful shutdown or
/// cancellation, and a failed round is logged and tried again at the next interval, never ending the service
/// (and so never the server it runs beside).
package struct PeriodicTask: Service {
    /// What the task does, for the log (`key pruning`).
    package let name: String
    /// The time between two rounds; the first round runs one interval after the start, or at once with
    /// `immediately`.
    package let interval: Duration
    private let immediately: Bool
    private let clock: any WallClock
    private let logger: Logger
    private let work: @Sendable () async throws -> Void

    package init(
        name: String,
        interval: Duration,
        immediately: Bool = false,
        clock: any WallClock = .system,
        logger: Logger = .silent(label: "fleetauth.periodic"),
        work: @escaping @Sendable () async throws -> Void
    ) {
        self.name = name
        self.interval = interval
        self.immediately = immediately
        self.clock = clock
        self.logger = logger
        self.work = work
    }

    package func run() async throws {
        if immediately { await round() }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
            } catch {
                return
            }
            if Task.isCancelled || Task.isShuttingDownGracefully { return }
            await round()
        }
    }

    private func round() async {
        do {
            try await work()
        } catch {
            logger.error(
                "periodic task failed; retrying at the next interval",
                metadata: .fleetauth(["task": .string(name), "error": .string("\(error)")])
            )
        }
    }
}
