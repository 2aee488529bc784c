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
@available(FleetAuthGRPC, *)
package final class EventLoopTaskExecutor: TaskExecutor {
    private let group: MultiThreadedEventLoopGroup
    private let loops: Set<ObjectIdentifier>

    package init(group: MultiThreadedEventLoopGroup = .singleton) {
        self.group = group
        self.loops = Set(group.makeIterator().map { ObjectIdentifier($0) })
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        var loop: any EventLoop = group.next()
        if let current = MultiThreadedEventLoopGroup.currentEventLoop, loops.contains(ObjectIdentifier(current)) {
            loop = current
        }
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
