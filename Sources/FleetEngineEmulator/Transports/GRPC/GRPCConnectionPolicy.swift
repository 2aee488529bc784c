import FleetAuthServerSupport
import GRPCNIOTransportHTTP2
import NIOCore
import NIOHTTP2

/// How long the gRPC port keeps a connection, and how much one connection may ask at once.
///
/// grpc-swift closes an idle connection (no call open for `ServerLimits.idleTimeout`, 30 s as over REST) and one
/// older than ``maximumAge`` gracefully: a GOAWAY, then a PING, then — once the client answers the PING — a final
/// GOAWAY and the close. A client that never answers (or never even sends HTTP/2's preface) would stay connected
/// forever, so a connection that sends nothing at all for `ServerLimits.idleTimeout` plus ``silentClientGrace``
/// is closed outright. Keepalive PINGs every ``keepaliveInterval`` without inbound data find dead peers while calls
/// are open; one unanswered for ``keepaliveTimeout`` closes the connection.
///
/// Over HTTP/2 a client can also keep a stream open by trickling its request (a DATA frame of one byte every few
/// seconds): a stream whose request has not ended `ServerLimits.requestTimeout` after it opened is reset
/// (`StreamRequestDeadline`). One client address holds at most `ServerLimits.maximumConnectionsPerClient`
/// connections, as on the REST port.
public struct GRPCConnectionPolicy: Sendable, Hashable {
    /// The longest a connection lives before it is asked to go away (GOAWAY); nil for no limit.
    public var maximumAge: Duration?
    /// How long calls still open at a max-age GOAWAY may take to finish before the connection is closed.
    public var maximumAgeGrace: Duration
    /// How long without inbound data before the server sends a keepalive PING.
    public var keepaliveInterval: Duration
    /// How long a keepalive PING may go unanswered.
    public var keepaliveTimeout: Duration
    /// How many calls one connection may have open at once (HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS`).
    public var maximumConcurrentStreams: Int
    /// How much longer than the idle timeout a connection that sends nothing at all is kept.
    public var silentClientGrace: Duration

    public init(
        maximumAge: Duration? = .seconds(3600),
        maximumAgeGrace: Duration = .seconds(30),
        keepaliveInterval: Duration = .seconds(60),
        keepaliveTimeout: Duration = .seconds(20),
        maximumConcurrentStreams: Int = 100,
        silentClientGrace: Duration = .seconds(5)
    ) {
        self.maximumAge = maximumAge
        self.maximumAgeGrace = maximumAgeGrace
        self.keepaliveInterval = keepaliveInterval
        self.keepaliveTimeout = keepaliveTimeout
        self.maximumConcurrentStreams = maximumConcurrentStreams
        self.silentClientGrace = silentClientGrace
    }

    /// The transport's configuration for this policy and the server's limits.
    func apply(to config: inout HTTP2ServerTransport.Posix.Config, limits: ServerLimits) {
        let idleTimeout = limits.idleTimeout
        config.connection.maxIdleTime = idleTimeout
        config.connection.maxAge = maximumAge
        config.connection.maxGraceTime = maximumAgeGrace
        config.connection.keepalive.time = keepaliveInterval
        config.connection.keepalive.timeout = keepaliveTimeout
        config.http2.maxConcurrentStreams = maximumConcurrentStreams
        let silence = TimeAmount(idleTimeout + silentClientGrace)
        let perClient = ClientConnectionLimit(maximum: limits.maximumConnectionsPerClient)
        config.channelDebuggingCallbacks.onAcceptTCPConnection = { channel in
            guard perClient.admit(channel) else {
                channel.close(promise: nil)
                return channel.eventLoop.makeFailedFuture(ChannelError.inputClosed)
            }
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandlers(
                    [IdleStateHandler(readTimeout: silence), SilentConnectionCloser()],
                    position: .first
                )
            }
        }
        let requestTimeout = TimeAmount(limits.requestTimeout)
        config.channelDebuggingCallbacks.onAcceptHTTP2Stream = { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(
                    StreamRequestDeadline(timeout: requestTimeout),
                    position: .first
                )
            }
        }
    }
}

/// Resets an HTTP/2 stream whose request has not ended (`END_STREAM` from the client) within `timeout` of the
/// stream's start: every Fleet Engine RPC is unary, so a request that takes longer is being trickled.
final class StreamRequestDeadline: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            bound.value.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers) where headers.endStream: ended()
        case .data(let data) where data.endStream: ended()
        default: break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        ended()
    }

    private func ended() {
        timer?.cancel()
        timer = nil
    }
}

/// Closes a connection the moment ``IdleStateHandler`` reports that nothing was read for its read timeout.
final class SilentConnectionCloser: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case IdleStateHandler.IdleStateEvent.read = event {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
