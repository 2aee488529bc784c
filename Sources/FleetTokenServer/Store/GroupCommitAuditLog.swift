import Foundation
import NIOConcurrencyHelpers

/// An ``AuditLog`` that commits the entries of concurrent token requests together (group commit).
///
/// Every token's audit entry must be durable before the token is answered, and one transaction per token makes the
/// database's commit the token server's ceiling. Here a request's entry joins the batch being gathered while the
/// previous batch commits; each batch is one transaction of the underlying log, and every request waits until the
/// transaction holding its entry has committed (or failed, which fails every request in it). No entry is answered
/// before it is durable; a lone request waits for one commit, as before.
public final class GroupCommitAuditLog: AuditLog {
    private typealias Waiter = (entries: [AuditEntry], continuation: CheckedContinuation<Void, any Error>)

    /// Where batches are written.
    public let log: any AuditLog
    /// The most entries written in one transaction.
    public let maximumBatch: Int
    /// The requests waiting for a batch, and whether a batch is being committed.
    private struct State {
        var pending: [Waiter] = []
        var committing = false
    }

    private let state = NIOLockedValueBox(State())

    public init(_ log: any AuditLog, maximumBatch: Int = 512) {
        self.log = log
        self.maximumBatch = maximumBatch
    }

    public func append(contentsOf entries: [AuditEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let starts = state.withLockedValue { state in
                state.pending.append((entries, continuation))
                if state.committing { return false }
                state.committing = true
                return true
            }
            if starts { Task { await self.commitPending() } }
        }
    }

    /// Commits batches until nothing is pending.
    private func commitPending() async {
        while true {
            let batch: [Waiter]? = state.withLockedValue { state in
                guard !state.pending.isEmpty else {
                    state.committing = false
                    return nil
                }
                var count = 0
                var taken = 0
                while taken < state.pending.count,
                    taken == 0 || count + state.pending[taken].entries.count <= maximumBatch
                {
                    count += state.pending[taken].entries.count
                    taken += 1
                }
                let batch = Array(state.pending.prefix(taken))
                state.pending.removeFirst(taken)
                return batch
            }
            guard let batch else { return }
            do {
                try await log.append(contentsOf: batch.flatMap(\.entries))
                for waiter in batch { waiter.continuation.resume() }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }

    public func recentEntries(limit: Int) async throws -> [AuditEntry] {
        try await log.recentEntries(limit: limit)
    }
}
