public import FleetTokenServer
public import ServiceLifecycle

/// Removes retired token-server keys once every token they signed has expired, once a minute, as a service that
/// ends on graceful shutdown. A failed prune is retried at the next interval; it never stops the server.
public struct KeyPruner: Service {
    public let keyring: Keyring
    public let interval: Duration

    public init(keyring: Keyring, interval: Duration = .seconds(60)) {
        self.keyring = keyring
        self.interval = interval
    }

    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            if Task.isCancelled || Task.isShuttingDownGracefully { return }
            _ = try? await keyring.prune()
        }
    }
}
