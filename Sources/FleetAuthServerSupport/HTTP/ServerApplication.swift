package import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
package import Logging
import NIOCore

/// The HTTP application both servers run (HTTP/1.1, or HTTPS with HTTP/2): Hummingbird with ``ServerLimits`` applied
/// to the request decoder, the idle timeout, each request's arrival (``RequestDeadline``) and the connections per
/// client (``ClientConnectionLimit``).
package enum ServerApplication {
    /// An application serving `router` on `host:port`.
    ///
    /// - Parameters:
    ///   - router: the routes.
    ///   - serverName: the `Server` header.
    ///   - host: the address to listen on.
    ///   - port: the port (0 picks a free one, passed to `onServerRunning`).
    ///   - limits: header limits and the idle timeout (the body limit is the routes' business).
    ///   - logger: Hummingbird's logger.
    ///   - certificate: serve HTTPS with this certificate (HTTP/2 and HTTP/1.1 by ALPN); plain HTTP/1.1 without.
    ///   - onServerRunning: called once the server listens, with its port.
    package static func make<Context: RequestContext>(
        router: Router<Context>,
        serverName: String,
        host: String,
        port: Int,
        limits: ServerLimits,
        logger: Logger,
        certificate: ServerCertificate? = nil,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol where Context.Source == ApplicationRequestContextSource {
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestDeadline(limits: limits)],
            idleTimeout: TimeAmount(limits.idleTimeout),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: limits.maximumHeaderFieldSize,
                maxHeaderListSize: limits.maximumHeaderListSize,
                maxHeaderFieldCount: limits.maximumHeaderCount
            )
        )
        // With a certificate: HTTPS, HTTP/2 or HTTP/1.1 as ALPN settles, the certificate read at each handshake (a
        // failure to set it up ends the server's run with the error, as a bind failure does).
        // Each connection is counted against its client's address first (``ClientConnectionLimit``).
        let perClient = ClientConnectionLimit(maximum: limits.maximumConnectionsPerClient)
        let server =
            certificate.map { certificate in
                HTTPServerBuilder { responder in
                    ConnectionLimitedChannel(
                        base: try HTTP2UpgradeChannel(
                            tlsConfiguration: certificate.serverConfiguration(),
                            configuration: .init(idleTimeout: limits.idleTimeout, streamConfiguration: http1),
                            responder: responder
                        ),
                        limit: perClient
                    )
                }
            }
            ?? HTTPServerBuilder { responder in
                ConnectionLimitedChannel(
                    base: HTTP1Channel(responder: responder, configuration: http1),
                    limit: perClient
                )
            }
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
