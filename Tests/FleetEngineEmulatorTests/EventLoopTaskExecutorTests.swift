import FleetEngineEmulator
import Foundation
import NIOCore
import NIOPosix
import Testing

@Suite("The gRPC server's task executor")
struct EventLoopTaskExecutorTests {
    @available(FleetAuthGRPC, *)
    @Test("a task preferring it runs on an event loop, after a suspension and in its child tasks too")
    func runsOnEventLoops() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let executor = EventLoopTaskExecutor(group: group)
        let places = await withTaskExecutorPreference(executor) {
            var places: [Bool] = [MultiThreadedEventLoopGroup.currentEventLoop != nil]
            // Resumed from another thread: the continuation's job comes back through the executor.
            await withCheckedContinuation { continuation in
                Thread { continuation.resume() }.start()
            }
            places.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
            let children = await withTaskGroup(of: Bool.self) { tasks in
                for _ in 0..<8 { tasks.addTask { MultiThreadedEventLoopGroup.currentEventLoop != nil } }
                return await tasks.reduce(into: []) { $0.append($1) }
            }
            return places + children
        }
        #expect(places == Array(repeating: true, count: 10))
        // Without the preference, the same code runs on the cooperative pool.
        #expect(MultiThreadedEventLoopGroup.currentEventLoop == nil)
        try await group.shutdownGracefully()
    }
}
