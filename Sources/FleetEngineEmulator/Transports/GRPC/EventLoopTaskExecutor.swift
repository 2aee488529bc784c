import NIOCore
package import NIOPosix

/// Runs the gRPC server's tasks on NIO's event loops instead of Swift's cooperative pool: a job runs on the event
/// loop of the group that enqueued it (a stream's handler resumed by its channel runs on that channel's thread), or
/// on the group's next loop when it was enqueued from elsewhere (another group's loop included, which may be shut
/// down before the job runs).
///
/// grpc-swift 2 hands every call between the HTTP/2 child channel's loop and the call's task several times (the
/// request message, each response part, the end of the stream); on the pool each hand-off is a wake-up of another
/// thread. `fleetauth bench emulator` (h2load, 8 calls in flight on 2 cores) measured gRPC UpdateVehicle 34–38 %
/// faster this way; REST's tasks stay on the pool, where the same change made Hummingbird slower.
///
/// A handler's CPU-bound work (a search among many vehicles) then holds its event loop, and the connections on it
/// wait, as they would wait for a busy pool thread.
///
/// A job enqueued from another thread (a handler resumed by the store's writer) would land on the group's next
/// loop, not necessarily its channel's, and the answer would then cross to the channel's loop. So each call's
/// handler runs under ``homeLoop``'s preference: the loop it started on, which is its channel's.
@available(FleetAuthGRPC, *)
package final class EventLoopTaskExecutor: TaskExecutor {
    private let group: MultiThreadedEventLoopGroup
    /// An executor per loop of the group, by the loop's identity.
    private let pinned: [ObjectIdentifier: SingleEventLoopTaskExecutor]

    package init(group: MultiThreadedEventLoopGroup = .singleton) {
        self.group = group
        self.pinned = Dictionary(
            uniqueKeysWithValues: group.makeIterator().map { (ObjectIdentifier($0), SingleEventLoopTaskExecutor($0)) }
        )
    }

    /// The executor the gRPC server's tasks prefer: NIO's singleton group.
    package static let singleton = EventLoopTaskExecutor()

    /// An executor that keeps every job on the calling thread's event loop, when that is one of the group's loops
    /// (a gRPC handler's channel's loop); nil elsewhere.
    package var homeLoop: (any TaskExecutor)? {
        MultiThreadedEventLoopGroup.currentEventLoop.flatMap { pinned[ObjectIdentifier($0)] }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        var loop: any EventLoop = group.next()
        if let current = MultiThreadedEventLoopGroup.currentEventLoop, pinned[ObjectIdentifier(current)] != nil {
            loop = current
        }
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Runs every job on one event loop.
@available(FleetAuthGRPC, *)
final class SingleEventLoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop

    init(_ loop: any EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
