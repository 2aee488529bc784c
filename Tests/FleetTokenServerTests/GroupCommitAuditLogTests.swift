import FleetAuthCore
import FleetTokenServer
import Foundation
import NIOConcurrencyHelpers
import Testing

/// An audit log that records each transaction and holds each one until the test lets it commit (or fail).
final class GatedAuditLog: AuditLog {
    private struct State {
        var transactions: [[AuditEntry]] = []
        var held: [(CheckedContinuation<Void, any Error>, fail: Bool)] = []
        var failNext = false
    }

    private let state = NIOLockedValueBox(State())

    var transactions: [[AuditEntry]] { state.withLockedValue { $0.transactions } }
    var holding: Int { state.withLockedValue { $0.held.count } }
    func failNextCommit() { state.withLockedValue { $0.failNext = true } }

    func append(contentsOf entries: [AuditEntry]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            state.withLockedValue { state in
                state.held.append((continuation, state.failNext))
                state.failNext = false
                state.transactions.append(entries)
            }
        }
    }

    /// Lets the held transactions end.
    func release() {
        let held: [(CheckedContinuation<Void, any Error>, fail: Bool)] = state.withLockedValue { state in
            let held = state.held
            state.held = []
            return held
        }
        for (continuation, fail) in held {
            if fail { continuation.resume(throwing: CommitFailed()) } else { continuation.resume() }
        }
    }

    func recentEntries(limit: Int) async throws -> [AuditEntry] {
        Array(transactions.flatMap { $0 }.suffix(limit).reversed())
    }

    struct CommitFailed: Error {}
}

@Suite("Group commit of audit entries")
struct GroupCommitAuditLogTests {
    static func entry(_ index: Int) -> AuditEntry {
        AuditEntry(
            issuedAt: Date(epochSeconds: 1_800_000_000 + Int64(index)),
            username: "u\(index)",
            endpoint: .driver,
            scope: "vehicle v\(index)",
            kid: "k",
            expiresAt: Date(epochSeconds: 1_800_003_600)
        )
    }

    static func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test("requests arriving during a commit are committed together in the next one, and none returns before it")
    func batches() async throws {
        let gated = GatedAuditLog()
        let log = GroupCommitAuditLog(gated, maximumBatch: 32)
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                try await log.append(contentsOf: [Self.entry(0)])
                return 0
            }
            await Self.until { gated.holding == 1 }
            for index in 1...40 {
                group.addTask {
                    try await log.append(contentsOf: [Self.entry(index)])
                    return index
                }
            }
            await Self.until { log.waitingRequests == 40 }
            #expect(gated.transactions.count == 1, "nothing else commits while the first transaction is open")
            gated.release()
            // The next request leads: itself and 31 more in one transaction (32 at most), then the last 8.
            await Self.until { gated.holding == 1 }
            #expect(gated.transactions.count == 2 && gated.transactions[1].count == 32)
            gated.release()
            await Self.until { gated.holding == 1 }
            #expect(gated.transactions.count == 3 && gated.transactions[2].count == 8)
            gated.release()
            var returned: Set<Int> = []
            for try await index in group { returned.insert(index) }
            #expect(returned == Set(0...40))
        }
        #expect(Set(gated.transactions.flatMap { $0 }.map(\.username)) == Set((0...40).map { "u\($0)" }))
        #expect(log.waitingRequests == 0)
    }

    @Test("a failed commit fails every request in it; the next requests commit as usual")
    func failure() async throws {
        let gated = GatedAuditLog()
        let log = GroupCommitAuditLog(gated)
        gated.failNextCommit()
        let first = Task { try await log.append(contentsOf: [Self.entry(0)]) }
        await Self.until { gated.holding == 1 }
        gated.release()
        await #expect(throws: GatedAuditLog.CommitFailed.self) { try await first.value }
        async let second: Void = log.append(contentsOf: [Self.entry(1)])
        await Self.until { gated.holding == 1 }
        gated.release()
        try await second
        #expect(gated.transactions.map(\.count) == [1, 1])
    }
}
