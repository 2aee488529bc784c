import FleetAuthDatabase
import FleetAuthServerTesting
import NIOConcurrencyHelpers
import Testing

/// ``GroupCommit`` with a commit the test holds open: each batch waits until the test lets it end.
@Suite("Group commit: outcomes per item, concurrent commits")
struct GroupCommitTests {
    /// Records each batch and holds it until released.
    final class Gate: Sendable {
        private let state = NIOLockedValueBox<(batches: [[Int]], held: [CheckedContinuation<Void, Never>])>(([], []))
        var batches: [[Int]] { state.withLockedValue { $0.batches } }
        var holding: Int { state.withLockedValue { $0.held.count } }

        func commit(_ items: [Int]) async -> [String] {
            await withCheckedContinuation { continuation in
                state.withLockedValue {
                    $0.batches.append(items)
                    $0.held.append(continuation)
                }
            }
            return items.map { "item \($0)" }
        }

        /// Lets the oldest `count` held batches (all when nil) end.
        func release(_ count: Int? = nil) {
            let released = state.withLockedValue { state in
                let taken = Array(state.held.prefix(count ?? state.held.count))
                state.held.removeFirst(taken.count)
                return taken
            }
            for continuation in released { continuation.resume() }
        }
    }

    /// Waits for `condition` (see ``Waiting``: the limit only stops a hang).
    static func until(_ condition: () -> Bool) async throws {
        try await Waiting.until("the awaited state of the batches", every: .milliseconds(1)) { condition() }
    }

    @Test("up to the allowed number of commits run at once; the requests arriving meanwhile share the next batch")
    func concurrentCommits() async throws {
        let gate = Gate()
        let commits = GroupCommit<Int, String>(maximumBatch: 10, maximumConcurrentCommits: 2) { await gate.commit($0) }
        var tasks: [Task<String, any Error>] = []
        for item in 0..<2 {
            tasks.append(Task { try await commits.submit(item) })
            try await Self.until { gate.holding == item + 1 }
        }
        // Two commits are under way: the next requests wait, and then go together.
        for item in 2..<7 {
            tasks.append(Task { try await commits.submit(item) })
            try await Self.until { commits.waitingRequests == item - 1 }
        }
        #expect(gate.batches == [[0], [1]])
        // The first commit ends: its leader hands the lead to the first waiting request, which takes the rest.
        gate.release(1)
        try await Self.until { gate.batches.count == 3 }
        #expect(gate.batches.last == [2, 3, 4, 5, 6], "the waiting requests share one batch, in arrival order")
        #expect(gate.holding == 2)
        gate.release()
        for (item, task) in tasks.enumerated() { #expect(try await task.value == "item \(item)") }
        #expect(commits.waitingRequests == 0)
        #expect(commits.batches == 3)
    }

    @Test("a batch is cut at the maximum weight; an item heavier than that goes alone")
    func weights() async throws {
        let gate = Gate()
        let commits = GroupCommit<Int, String>(maximumBatch: 5, weight: { $0 }) { await gate.commit($0) }
        let first = Task { try await commits.submit(1) }
        try await Self.until { gate.holding == 1 }
        var tasks: [Task<String, any Error>] = []
        for (index, item) in [2, 3, 9, 1].enumerated() {
            tasks.append(Task { try await commits.submit(item) })
            try await Self.until { commits.waitingRequests == index + 1 }
        }
        // Each batch is let through once it is held: four of them.
        for count in 1...4 {
            try await Self.until { gate.batches.count == count && gate.holding == 1 }
            gate.release()
        }
        _ = try await first.value
        for task in tasks { _ = try await task.value }
        #expect(gate.batches == [[1], [2, 3], [9], [1]])
    }
}
