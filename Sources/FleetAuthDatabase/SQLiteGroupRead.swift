import FleetAuthServerCore
package import GRDB

/// Short reads that share a reader's turn: the key lookups on a server's hot path (a vehicle, a session).
///
/// GRDB's `read` from a task takes a reader from its pool on one queue, runs on the reader's queue, and resumes the
/// task: three thread switches, more than a lookup by primary key costs. Here a read joins a queue; one reader
/// takes every read waiting, runs each, answers its caller at once, and takes the next batch if one gathered
/// meanwhile. Each batch starts a new read transaction, so a read sees every write committed before it was
/// queued (a caller reads its own writes), and the reads of one batch see the same snapshot.
package final class SQLiteGroupRead: Sendable {
    private typealias Job = @Sendable (Result<Database, any Error>) -> Void

    private let reader: any DatabaseReader
    private let queue: DrainQueue<Job>

    /// Batches of at most `maximumBatch` reads on `reader`.
    package init(_ reader: any DatabaseReader, maximumBatch: Int = 256) {
        self.reader = reader
        queue = DrainQueue(maximumBatch: maximumBatch)
    }

    /// How many reader turns the reads have taken so far.
    package var batches: Int { queue.batches }

    /// Runs `value` in a read transaction shared with the reads queued beside it, and returns its result.
    package func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await awaitHandOff { deliver in enqueue { database in deliver(Result { try value(database.get()) }) } }
    }

    private func enqueue(_ job: @escaping Job) {
        if queue.push(job) { reader.asyncRead { database in self.drain(database) } }
    }

    /// On the reader's thread: runs batches until none is waiting.
    private func drain(_ database: Result<Database, any Error>) {
        var first = true
        while true {
            let batch = queue.next()
            if batch.isEmpty { return }
            var turn = database
            if !first, case .success(let db) = database, db.isInsideTransaction {
                // A new snapshot for reads queued after the last one began.
                do {
                    try db.preparedCommit()
                    try db.beginPreparedTransaction(immediate: false)
                } catch {
                    turn = .failure(error)
                }
            }
            first = false
            for job in batch { job(turn) }
        }
    }
}
