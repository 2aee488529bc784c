import NIOConcurrencyHelpers

/// The queue behind ``SQLiteGroupCommit`` and ``SQLiteGroupRead``: jobs waiting for a database thread, whether
/// that thread is draining them, and how many batches it has taken. The caller whose job finds no drain running
/// starts one; the drain takes batches until the queue is empty, which ends it under the same lock, so a job is
/// never left waiting with no drain to take it.
struct DrainQueue<Job: Sendable>: Sendable {
    private struct State {
        var pending: [Job] = []
        var draining = false
        var batches = 0
    }

    let maximumBatch: Int
    private let state = NIOLockedValueBox(State())

    init(maximumBatch: Int) {
        precondition(maximumBatch > 0, "A batch holds at least one job.")
        self.maximumBatch = maximumBatch
    }

    /// How many jobs wait now.
    var waiting: Int { state.withLockedValue { $0.pending.count } }
    /// How many batches have been taken so far.
    var batches: Int { state.withLockedValue { $0.batches } }

    /// Queues `job`; true when no drain runs, and the caller must start one.
    func push(_ job: Job) -> Bool {
        state.withLockedValue { state in
            state.pending.append(job)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
    }

    /// The next batch, `returned` (jobs of the last batch that did not run) first; empty when none waits, which
    /// ends the drain.
    func next(returning returned: [Job] = []) -> [Job] {
        state.withLockedValue { state in
            state.pending.insert(contentsOf: returned, at: 0)
            let taken = Array(state.pending.prefix(maximumBatch))
            state.pending.removeFirst(taken.count)
            if taken.isEmpty { state.draining = false } else { state.batches += 1 }
            return taken
        }
    }
}
