import NIOCore
import NIOHTTP1
import NIOPosix

/// A closed-loop HTTP/1.1 load generator over loopback: `connections` keep-alive connections, each sending its
/// next request as soon as the previous response has ended. Every connection lives on one event loop and keeps
/// its own tallies, so measuring costs no locks.
struct LoadGenerator {
    /// One request to send.
    struct Request: Sendable {
        var method: HTTPMethod
        var uri: String
        var headers: HTTPHeaders
        var body: ByteBuffer
    }

    /// What a run measured (responses completed inside the measuring window only).
    struct Result: Sendable {
        var seconds: Double
        var statuses: [Int: Int] = [:]
        /// Latencies in nanoseconds.
        var latencies: [UInt64] = []

        var count: Int { latencies.count }
        var rate: Double { Double(count) / seconds }
        var successes: Int { statuses.filter { (200..<300).contains($0.key) }.values.reduce(0, +) }

        /// The latency below which `fraction` of the requests completed, in milliseconds.
        func percentile(_ fraction: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let sorted = latencies.sorted()
            let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return Double(sorted[max(index, 0)]) / 1e6
        }

        mutating func merge(_ other: Result) {
            statuses.merge(other.statuses, uniquingKeysWith: +)
            latencies += other.latencies
        }
    }

    let host: String
    let port: Int
    let connections: Int
    /// Builds the `sequence`-th request of connection `connection`.
    let makeRequest: @Sendable (_ connection: Int, _ sequence: Int) -> Request

    /// Runs for `warmUp` (not counted), then measures for `duration`; every connection stops after that.
    func run(warmUp: Duration, duration: Duration) async throws -> Result {
        let group = MultiThreadedEventLoopGroup.singleton
        let start = NIODeadline.now() + TimeAmount(warmUp)
        let end = start + TimeAmount(duration)
        var futures: [EventLoopFuture<Result>] = []
        for index in 0..<connections {
            let loop = group.next()
            let promise = loop.makePromise(of: Result.self)
            let makeRequest = self.makeRequest
            let channel = try await ClientBootstrap(group: loop)
                .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectionHandler(
                                connection: index,
                                measureFrom: start,
                                stopAt: end,
                                promise: promise,
                                makeRequest: makeRequest
                            )
                        )
                    }
                }
                .connect(host: host, port: port).get()
            futures.append(promise.futureResult.always { _ in channel.close(promise: nil) })
        }
        let seconds = Double((end - start).nanoseconds) / 1e9
        var total = Result(seconds: seconds)
        for future in futures { total.merge(try await future.get()) }
        return total
    }

    /// Sends requests back to back on one connection and records every response.
    private final class ConnectionHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        let connection: Int
        let measureFrom: NIODeadline
        let stopAt: NIODeadline
        let promise: EventLoopPromise<Result>
        let makeRequest: @Sendable (Int, Int) -> Request
        var sequence = 0
        var sentAt = NIODeadline.now()
        var status = 0
        var finished = false
        var result: Result

        init(
            connection: Int,
            measureFrom: NIODeadline,
            stopAt: NIODeadline,
            promise: EventLoopPromise<Result>,
            makeRequest: @escaping @Sendable (Int, Int) -> Request
        ) {
            self.connection = connection
            self.measureFrom = measureFrom
            self.stopAt = stopAt
            self.promise = promise
            self.makeRequest = makeRequest
            self.result = Result(seconds: Double((stopAt - measureFrom).nanoseconds) / 1e9)
        }

        func channelActive(context: ChannelHandlerContext) {
            send(context: context)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = Int(head.status.code)
            case .body:
                break
            case .end:
                let now = NIODeadline.now()
                if now >= measureFrom && now <= stopAt {
                    result.latencies.append(UInt64((now - sentAt).nanoseconds))
                    result.statuses[status, default: 0] += 1
                }
                if now < stopAt {
                    send(context: context)
                } else {
                    finished = true
                    promise.succeed(result)
                }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !finished { promise.fail(ChannelError.ioOnClosedChannel) }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if !finished { promise.fail(error) }
            finished = true
            context.close(promise: nil)
        }

        private func send(context: ChannelHandlerContext) {
            let request = makeRequest(connection, sequence)
            sequence += 1
            var head = HTTPRequestHead(version: .http1_1, method: request.method, uri: request.uri)
            head.headers = request.headers
            head.headers.replaceOrAdd(name: "Content-Length", value: String(request.body.readableBytes))
            sentAt = .now()
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if request.body.readableBytes > 0 {
                context.write(wrapOutboundOut(.body(.byteBuffer(request.body))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
