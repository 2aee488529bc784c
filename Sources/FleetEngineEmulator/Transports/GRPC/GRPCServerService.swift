import FleetAuthServerSupport
import FleetEngineAPI
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
public import ServiceLifecycle

/// The emulator's gRPC server as a service: plaintext HTTP/2 (h2c) or TLS on `host:port`, serving the vehicle and
/// trip services, the Deliveries API, gRPC health checking (`grpc.health.v1.Health`) and server reflection (`grpc.reflection.v1` and
/// `v1alpha`), with request messages limited like REST bodies (larger ones are `RESOURCE_EXHAUSTED`, checked by
/// each method; the transport itself resets streams only past four times that), and connections kept as
/// ``GRPCConnectionPolicy`` says. It calls `onServerRunning` with its port once it listens and shuts down gracefully
/// with its group.
@available(FleetAuthGRPC, *)
public struct GRPCServerService: Service {
    private let makeServer:
        @Sendable (_ listener: GRPCListener) -> GRPCServer<HTTP2ServerTransport.Custom<GRPCListener>>
    private let certificate: ServerCertificate?
    private let shuttingDown: NIOLockedValueBox<Bool>
    private let host: String
    private let port: Int
    private let onServerRunning: @Sendable (_ port: Int) async -> Void

    init(
        rpcs: FleetEngineGRPCService,
        host: String,
        port: Int,
        limits: ServerLimits,
        policy: GRPCConnectionPolicy,
        readiness: Readiness,
        certificate: ServerCertificate? = nil,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void
    ) {
        var settings = HTTP2ServerTransport.Posix.Config.defaults
        settings.rpc.maxRequestPayloadSize = rpcs.call.maximumMessageSize * 4
        policy.apply(to: &settings, limits: limits)
        let config = HTTP2ServerTransport.Custom<GRPCListener>.Config(
            compression: settings.compression,
            connection: settings.connection,
            http2: settings.http2,
            rpc: settings.rpc,
            channelDebuggingCallbacks: settings.channelDebuggingCallbacks
        )
        let tracing = ServerTracing.isOn
        let shuttingDown = NIOLockedValueBox(false)
        let names = [
            FleetEngineV1.VehicleService.descriptor.fullyQualifiedService,
            FleetEngineV1.TripService.descriptor.fullyQualifiedService,
            FleetEngineDelivery.DeliveryService.descriptor.fullyQualifiedService,
            Grpc_Health_V1_Health.descriptor.fullyQualifiedService,
            Grpc_Reflection_V1_ServerReflection.descriptor.fullyQualifiedService,
            Grpc_Reflection_V1alpha_ServerReflection.descriptor.fullyQualifiedService,
        ]
        let reflection = ReflectionService(services: names)
        let health = HealthService(
            services: Set(names),
            readiness: readiness,
            watchInterval: .seconds(1),
            shuttingDown: shuttingDown
        )
        makeServer = { listener in
            let services: [any RegistrableRPCService] =
                [rpcs, health, reflection, ReflectionServiceV1Alpha(reflection: reflection)]
            return GRPCServer(
                transport: HTTP2ServerTransport.Custom(listenerFactory: listener, config: config),
                services: services,
                interceptors: tracing ? [TracingInterceptor()] : []
            )
        }
        self.shuttingDown = shuttingDown
        self.certificate = certificate
        self.host = host
        self.port = port
        self.onServerRunning = onServerRunning
    }

    public func run() async throws {
        // The transport takes IP addresses only: a host name (localhost) is resolved first, as REST's listener does.
        let resolved = try NIOCore.SocketAddress.makeAddressResolvingHost(host, port: port)
        guard resolved.ipAddress != nil else { throw SocketAddressError.unsupported }
        // TLS: the certificate is read again at each handshake (ServerCertificate reloads it), ALPN h2 or none, with
        // the REST port's versions and cipher suites.
        let tls = try certificate?.connectionInitializer(applicationProtocols: ["grpc-exp", "h2"])
        let server = makeServer(
            GRPCListener(address: resolved, tls: tls, eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        )
        try await withThrowingTaskGroup { group in
            group.addTask(executorPreference: EventLoopTaskExecutor.singleton) { try await server.serve() }
            guard let address = await server.transport.listeningAddress else {
                // The transport could not bind: serve() ends with the reason (the address in use, say).
                do { try await group.waitForAll() } catch { throw Self.rootCause(error) }
                throw ListenerStartError()
            }
            let port = address.ipv4?.port ?? address.ipv6?.port ?? 0
            await onServerRunning(port)
            try? await gracefulShutdown()
            shuttingDown.withLockedValue { $0 = true }
            server.beginGracefulShutdown()
            try await group.waitForAll()
        }
    }

    /// The transport stopped before it listened, without saying why.
    struct ListenerStartError: Error, CustomStringConvertible {
        var description: String { "the gRPC port stopped before it was listening" }
    }

    /// The error under gRPC's wrappers (`transportError` around the socket's `bind` failure).
    private static func rootCause(_ error: any Error) -> any Error {
        var error = error
        while true {
            if let wrapper = error as? RuntimeError, let cause = wrapper.cause {
                error = cause
            } else if let wrapper = error as? RPCError, let cause = wrapper.cause {
                error = cause
            } else {
                return error
            }
        }
    }
}
