import FleetAuthServerSupport
import GRPCCore
import GRPCNIOTransportHTTP2
public import ServiceLifecycle

/// The emulator's gRPC server as a service: plaintext HTTP/2 (h2c) on `host:port`, serving the vehicle and trip
/// services, with request messages limited like REST bodies (larger ones are `RESOURCE_EXHAUSTED`, checked by
/// each method; the transport itself resets streams only past four times that), and connections kept as
/// ``GRPCConnectionPolicy`` says. It calls `onServerRunning` with its port once it listens and shuts down gracefully
/// with its group.
@available(FleetAuthGRPC, *)
public struct GRPCServerService: Service {
    private let server: GRPCServer<HTTP2ServerTransport.Posix>
    private let onServerRunning: @Sendable (_ port: Int) async -> Void

    init(
        call: GRPCCall,
        host: String,
        port: Int,
        maximumMessageSize: Int,
        idleTimeout: Duration,
        policy: GRPCConnectionPolicy,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void
    ) {
        var config = HTTP2ServerTransport.Posix.Config.defaults
        config.rpc.maxRequestPayloadSize = maximumMessageSize * 4
        policy.apply(to: &config, idleTimeout: idleTimeout)
        let transport = HTTP2ServerTransport.Posix(
            address: .ipv4(host: host, port: port),
            transportSecurity: .plaintext,
            config: config
        )
        server = GRPCServer(
            transport: transport,
            services: [
                VehicleServiceHandler(call: call, maximumMessageSize: maximumMessageSize),
                TripServiceHandler(call: call, maximumMessageSize: maximumMessageSize),
            ]
        )
        self.onServerRunning = onServerRunning
    }

    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await server.serve() }
            let address = try await server.transport.listeningAddress
            await onServerRunning(address.ipv4?.port ?? address.ipv6?.port ?? 0)
            try? await gracefulShutdown()
            server.beginGracefulShutdown()
        }
    }
}
