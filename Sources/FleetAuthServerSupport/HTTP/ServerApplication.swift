package import Hummingbird
import HummingbirdCore
package import Logging
import NIOCore

/// The HTTP/1.1 application both servers run: Hummingbird with ``ServerLimits`` applied to the request decoder
/// and the idle timeout.
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
    ///   - onServerRunning: called once the server listens, with its port.
    package static func make<Context: RequestContext>(
        router: Router<Context>,
        serverName: String,
        host: String,
        port: Int,
        limits: ServerLimits,
        logger: Logger,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol where Context.Source == ApplicationRequestContextSource {
        let http1 = HTTP1Channel.Configuration(
            idleTimeout: TimeAmount(limits.idleTimeout),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: limits.maximumHeaderFieldSize,
                maxHeaderListSize: limits.maximumHeaderListSize,
                maxHeaderFieldCount: limits.maximumHeaderCount
            )
        )
        return Application(
            router: router,
            server: .http1(configuration: http1),
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
