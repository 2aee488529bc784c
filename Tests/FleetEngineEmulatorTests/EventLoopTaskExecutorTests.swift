import FleetEngineEmulator
import Foundation
import NIOCore
import NIOPosix
import Testing

@Suite("The gRPC server's task executor")
struct EventLoopTaskExecutorTests {
    @available(FleetAuthGRPC, *)
    @Test("a task preferring it runs on its group's event loops, after suspensions and in its child tasks too")
    func runsOnItsLoops() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let resumer = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let ours = Set(group.makeIterator().map { ObjectIdentifier($0) })
        @Sendable func onOurLoop() -> Bool {
            MultiThreadedEventLoopGroup.currentEventLoop.map { ours.contains(ObjectIdentifier($0)) } ?? false
        }
        let places = await withTaskExecutorPreference(EventLoopTaskExecutor(group: group)) {
            var places = [onOurLoop()]
            // Resumed from a thread of no event loop, and from another group's loop: back on one of the group's.
            await withCheckedContinuation { continuation in Thread { continuation.resume() }.start() }
            places.append(onOurLoop())
            await withCheckedContinuation { continuation in resumer.next().execute { continuation.resume() } }
            places.append(onOurLoop())
            let children = await withTaskGroup(of: Bool.self) { tasks in
                for _ in 0..<8 { tasks.addTask { onOurLoop() } }
                return await tasks.reduce(into: []) { $0.append($1) }
            }
            return places + children
        }
        #expect(places == Array(repeating: true, count: 11))
        // Without the preference, the same code runs on the cooperative pool.
        #expect(MultiThreadedEventLoopGroup.currentEventLoop == nil)
        try await resumer.shutdownGracefully()
        try await group.shutdownGracefully()
    }
}
