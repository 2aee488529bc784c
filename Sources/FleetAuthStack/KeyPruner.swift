import FleetTokenServer
import ServiceLifecycle

/// Removes retired token-server keys once every token they signed has expired, once a minute, as a service that
/// ends on graceful shutdown.
struct KeyPruner: Service {
    let keyring: Keyring
    var interval: Duration = .seconds(60)

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            if Task.isCancelled || Task.isShuttingDownGracefully { return }
            _ = try? await keyring.prune()
        }
    }
}
