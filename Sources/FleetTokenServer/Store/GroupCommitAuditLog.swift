import Foundation
import NIOConcurrencyHelpers

/// An ``AuditLog`` that commits the entries of concurrent token requests together (group commit).
///
/// Every token's audit entry must be durable before the token is answered, and one transaction per token makes the
/// database's commit the token server's ceiling. Here a request's entry joins the batch being gathered while the
/// previous batch commits; each batch is one transaction of the underlying log, and every request waits until the
/// transaction holding its entry has committed (or failed, which fails every request in it). No entry is answered
/// before it is durable; a lone request waits for one commit, as before.
///
/// No task is started: the request that finds no commit under way leads, committing its own entries with those
/// waiting; when that commit ends it hands the lead to the first request that arrived meanwhile, and returns.
public final class GroupCommitAuditLog: AuditLog {
    private enum Turn: Sendable {
        /// The entries are durable.
        case committed
        /// Commit them yourself, with those waiting.
        case lead
    }

    private typealias Waiter = (entries: [AuditEntry], continuation: CheckedContinuation<Turn, any Error>)

    /// Where batches are written.
    public let log: any AuditLog
    /// The most entries written in one transaction.
    public let maximumBatch: Int
    /// The requests waiting for a batch, and whether one is committing.
    private struct State {
        var pending: [Waiter] = []
        var committing = false
    }

    private let state = NIOLockedValueBox(State())

    /// How many requests wait for a commit now.
    package var waitingRequests: Int { state.withLockedValue { $0.pending.count } }

    public init(_ log: any AuditLog, maximumBatch: Int = 512) {
        self.log = log
        self.maximumBatch = maximumBatch
    }

    public func append(contentsOf entries: [AuditEntry]) async throws {
        guard !entries.isEmpty else { return }
        let turn = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Turn, any Error>) in
            let leads = state.withLockedValue { state in
                if state.committing {
                    state.pending.append((entries, continuation))
                    return false
                }
                state.committing = true
                return true
            }
            if leads { continuation.resume(returning: .lead) }
        }
        if case .lead = turn { try await lead(entries) }
    }

    /// Commits `own` with the waiting entries that fit in one batch, answers their requests, and hands the lead to
    /// the next waiting request (or ends the commit run).
    private func lead(_ own: [AuditEntry]) async throws {
        let batch: [Waiter] = state.withLockedValue { state in
            var count = own.count
            var taken = 0
            while taken < state.pending.count, count + state.pending[taken].entries.count <= maximumBatch {
                count += state.pending[taken].entries.count
                taken += 1
            }
            defer { state.pending.removeFirst(taken) }
            return Array(state.pending.prefix(taken))
        }
        let outcome: Result<Void, any Error>
        do {
            try await log.append(contentsOf: own + batch.flatMap(\.entries))
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        for waiter in batch {
            switch outcome {
            case .success: waiter.continuation.resume(returning: .committed)
            case .failure(let error): waiter.continuation.resume(throwing: error)
            }
        }
        let next: Waiter? = state.withLockedValue { state in
            guard !state.pending.isEmpty else {
                state.committing = false
                return nil
            }
            return state.pending.removeFirst()
        }
        next?.continuation.resume(returning: .lead)
        try outcome.get()
    }

    public func recentEntries(limit: Int) async throws -> [AuditEntry] {
        try await log.recentEntries(limit: limit)
    }
}
