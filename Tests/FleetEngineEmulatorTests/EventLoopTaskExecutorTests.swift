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

    @available(FleetAuthGRPC, *)
    @Test("under its home loop's preference a task resumed from other threads stays on the loop it started on")
    func homeLoopKeepsTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let executor = EventLoopTaskExecutor(group: group)
        // Off the group's loops there is no home loop.
        #expect(executor.homeLoop == nil)
        let (start, resumed) = await withTaskExecutorPreference(executor) {
            let start = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0) }
            guard let home = executor.homeLoop else { return (start, [ObjectIdentifier?]()) }
            return await withTaskExecutorPreference(home) {
                var resumed: [ObjectIdentifier?] = []
                // Without the home loop, a resumption from a plain thread goes to the group's next loop.
                for _ in 0..<8 {
                    await withCheckedContinuation { continuation in Thread { continuation.resume() }.start() }
                    resumed.append(MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0) })
                }
                return (start, resumed)
            }
        }
        #expect(start != nil)
        #expect(resumed == Array(repeating: start, count: 8))
        try await group.shutdownGracefully()
    }
}
