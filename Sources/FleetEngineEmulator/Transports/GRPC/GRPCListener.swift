import GRPCNIOTransportHTTP2
import NIOCore
import NIOPosix

/// The gRPC port's listening socket: plaintext HTTP/2, or TLS added to each accepted connection by the server
/// certificate's initializer, so the gRPC port offers the same protocol versions and cipher suites as the REST port
/// (grpc-swift's own TLS configuration has no setting for cipher suites).
@available(FleetAuthGRPC, *)
struct GRPCListener: HTTP2ServerTransport.ListenerFactory {
    let address: NIOCore.SocketAddress
    /// Adds TLS to an accepted connection; nil for plaintext.
    let tls: (@Sendable (any Channel) throws -> Void)?
    let eventLoopGroup: any EventLoopGroup

    func makeListeningChannel(
        listenerConfigurator: HTTP2ServerTransport.ListenerConfigurator,
        connectionConfigurator: HTTP2ServerTransport.ConnectionConfigurator
    ) async throws -> NIOAsyncChannel<HTTP2ServerTransport.ConnectionConfigurator.ConnectionChannel, Never> {
        let tls = self.tls
        return try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { listenerConfigurator.configure(channel: $0) }
            .bind(to: address) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try tls?(channel)
                }.flatMap {
                    connectionConfigurator.configure(
                        channel: channel,
                        tls: tls == nil ? .none : .configured(requireALPN: false)
                    )
                }
            }
    }
}
