import HTTPTypes
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
package import NIOCore
package import NIOHTTPTypes

/// Bounds how long one request may take to arrive: a client that sends its head and then trickles the body (a
/// byte every few seconds: the idle timeout never fires, since bytes keep coming) would otherwise hold its
/// connection, and the memory behind it, for as long as it likes.
///
/// - The body must be complete within ``ServerLimits/requestTimeout`` of the head; if not, the connection (or,
///   over HTTP/2, the stream) is closed.
/// - A request answered before its body was read (a 401 before the body is looked at, a 413 for a declared length
///   over the limit) gets `Connection: close`, and what remains of the body is drained for at most
///   ``ServerLimits/drainTimeout`` before the connection closes, rather than for as long as the client trickles it.
///
/// It sits in the pipeline after the HTTP/1 codec, where a request is a head, body parts and an end.
package final class RequestDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let requestTimeout: TimeAmount
    private let drainTimeout: TimeAmount
    /// A request's head arrived and its end has not.
    private var reading = false
    private var timer: (task: Scheduled<Void>, deadline: NIODeadline)?

    package init(limits: ServerLimits) {
        requestTimeout = TimeAmount(limits.requestTimeout)
        drainTimeout = TimeAmount(limits.drainTimeout)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            reading = true
            closeUnlessDone(context, after: requestTimeout)
        case .body:
            break
        case .end:
            reading = false
            cancel()
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard reading else { return context.write(data, promise: promise) }
        switch unwrapOutboundIn(data) {
        case .head(var response):
            // Answered before the body was read: the client should not send the rest on this connection.
            response.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(response)), promise: promise)
        case .end:
            context.write(data, promise: promise)
            closeUnlessDone(context, after: drainTimeout)
        case .body:
            context.write(data, promise: promise)
        }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    /// Closes the channel after `delay` unless the request's end arrives first (an earlier, shorter deadline stays).
    private func closeUnlessDone(_ context: ChannelHandlerContext, after delay: TimeAmount) {
        let deadline = NIODeadline.now() + delay
        if let timer, timer.deadline <= deadline { return }
        cancel()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            bound.value.close(promise: nil)
        }
        timer = (task, deadline)
    }

    private func cancel() {
        timer?.task.cancel()
        timer = nil
    }
}

/// Caps the connections one client address holds at once (``ServerLimits/maximumConnectionsPerClient``): one
/// machine cannot take every file descriptor the server has, whatever each connection does. A connection over
/// the cap is closed as it is accepted.
package final class ClientConnectionLimit: Sendable {
    /// The cap; 0 for none.
    package let maximum: Int
    private let counts = NIOLockedValueBox<[String: Int]>([:])

    package init(maximum: Int) {
        self.maximum = maximum
    }

    /// Counts `channel` against its address until it closes; false (and nothing counted) when the address is at
    /// its cap.
    package func admit(_ channel: any Channel) -> Bool {
        guard maximum > 0, let address = channel.remoteAddress?.ipAddress else { return true }
        let admitted = counts.withLockedValue { counts in
            let open = counts[address, default: 0]
            guard open < maximum else { return false }
            counts[address] = open + 1
            return true
        }
        guard admitted else { return false }
        channel.closeFuture.whenComplete { _ in
            self.counts.withLockedValue { counts in
                let open = counts[address, default: 1] - 1
                counts[address] = open > 0 ? open : nil
            }
        }
        return true
    }

    /// How many connections `address` holds now.
    package func connections(from address: String) -> Int {
        counts.withLockedValue { $0[address, default: 0] }
    }
}

/// A server's child channel with ``ClientConnectionLimit`` applied before `Base` sets the connection up.
struct ConnectionLimitedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let limit: ClientConnectionLimit

    struct OverLimit: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard limit.admit(channel) else {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(OverLimit())
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
