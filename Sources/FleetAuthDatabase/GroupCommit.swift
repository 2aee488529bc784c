import FleetAuthServerCore
import NIOConcurrencyHelpers

/// Concurrent requests' items committed together (group commit), for a store where one statement or transaction
/// per item makes the commit the ceiling: a request's item joins the batch gathering while the previous batch
/// commits; each batch is one call of `commit`; every request waits until the batch holding its item is committed
/// and gets its own outcome (or the batch's error, which fails every request in it). A lone request is one
/// commit of its own, as without batching.
///
/// No task is started: a request that finds fewer commits under way than allowed (`maximumConcurrentCommits`, one
/// unless told) leads, committing its item with those waiting; when that commit ends it answers them, hands the
/// lead to the first request that arrived meanwhile, and returns. Items are taken in arrival order; with one commit
/// at a time they are also committed in that order (a caller awaiting each item keeps its order either way).
package final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    /// Commits a batch, returning one outcome per item, in order.
    package typealias Commit = @Sendable (_ items: [Item]) async throws -> [Outcome]

    private enum Turn: Sendable {
        /// Committed by another request's lead.
        case committed(Outcome)
        /// Commit it yourself, with those waiting.
        case lead
    }

    private typealias Waiter = (item: Item, deliver: @Sendable (Result<Turn, any Error>) -> Void)

    private struct State {
        var pending: [Waiter] = []
        var committing = 0
        var batches = 0
    }

    private let commit: Commit
    private let maximumBatch: Int
    private let maximumConcurrentCommits: Int
    private let weight: @Sendable (Item) -> Int
    private let state = NIOLockedValueBox(State())

    /// Batches of at most `maximumBatch`, counted in `weight` (one per item unless told; an item heavier than
    /// that is committed alone), at most `maximumConcurrentCommits` committing at once.
    package init(
        maximumBatch: Int,
        maximumConcurrentCommits: Int = 1,
        weight: @escaping @Sendable (Item) -> Int = { _ in 1 },
        commit: @escaping Commit
    ) {
        precondition(maximumBatch > 0, "A batch holds at least one item.")
        precondition(maximumConcurrentCommits > 0, "At least one commit runs.")
        self.maximumBatch = maximumBatch
        self.maximumConcurrentCommits = maximumConcurrentCommits
        self.weight = weight
        self.commit = commit
    }

    /// How many requests wait for a commit now.
    package var waitingRequests: Int { state.withLockedValue { $0.pending.count } }
    /// How many batches have been committed (or failed) so far.
    package var batches: Int { state.withLockedValue { $0.batches } }

    /// Commits `item` with the items submitted beside it; returns its outcome once its batch is committed.
    package func submit(_ item: Item) async throws -> Outcome {
        let turn: Turn = try await awaitHandOff { deliver in
            let leads = state.withLockedValue { state in
                if state.committing == maximumConcurrentCommits {
                    state.pending.append((item, deliver))
                    return false
                }
                state.committing += 1
                return true
            }
            if leads { deliver(.success(.lead)) }
        }
        switch turn {
        case .committed(let outcome): return outcome
        case .lead: return try await lead(item)
        }
    }

    /// Commits `own` with the waiting items that fit in one batch, answers their requests, and hands the lead to
    /// the next waiting request (or ends the commit run).
    private func lead(_ own: Item) async throws -> Outcome {
        let batch: [Waiter] = state.withLockedValue { state in
            var total = weight(own)
            var taken = 0
            while taken < state.pending.count {
                let next = weight(state.pending[taken].item)
                guard total + next <= maximumBatch else { break }
                total += next
                taken += 1
            }
            state.batches += 1
            defer { state.pending.removeFirst(taken) }
            return Array(state.pending.prefix(taken))
        }
        let outcome: Result<[Outcome], any Error>
        do {
            // A closure, not the key path `\.item`: in this unspecialized generic code a key path is built anew on
            // every call, demangling its types (2.4 % of the machine under PostgreSQL's update load).
            let outcomes = try await commit([own] + batch.map { $0.item })
            precondition(outcomes.count == batch.count + 1, "A commit answers one outcome per item.")
            outcome = .success(outcomes)
        } catch {
            outcome = .failure(error)
        }
        for (index, waiter) in batch.enumerated() {
            switch outcome {
            case .success(let outcomes): waiter.deliver(.success(.committed(outcomes[index + 1])))
            case .failure(let error): waiter.deliver(.failure(error))
            }
        }
        let next: Waiter? = state.withLockedValue { state in
            guard !state.pending.isEmpty else {
                state.committing -= 1
                return nil
            }
            return state.pending.removeFirst()
        }
        next?.deliver(.success(.lead))
        return try outcome.get()[0]
    }
}
