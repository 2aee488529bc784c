import FleetAuthServerCore
package import GRDB

/// Writes that share SQLite's transactions (group commit).
///
/// SQLite has one writer, and GRDB runs each `write` as its own transaction, reached from the caller's task by two
/// thread switches. Under load that makes the commit (its `BEGIN`, its log append and file locks) and the switches
/// the cost of every update. Here an update joins a queue; the writer's thread takes every update waiting, runs
/// them in order in one transaction — each inside its own savepoint, so an update that throws is rolled back alone
/// and its caller gets its error — commits, answers every caller, and takes the next batch if one gathered
/// meanwhile. No caller is answered before the transaction holding its update has committed; if the commit fails,
/// every update in it fails with that error and none is kept. A lone update is one transaction, as before.
///
/// Updates run in the order they were queued, so one caller's writes keep their order, and two updates of the same
/// row in one batch see each other's effects exactly as two transactions would.
package final class SQLiteGroupCommit: Sendable {
    /// An update: run inside the batch's transaction (in a savepoint of its own when `isolated`), it reports
    /// whether it failed, and how to answer its caller once the batch's commit succeeded (nil) or failed. Given no
    /// database, it does not run, and its answer passes the batch's error on.
    private typealias Job =
        @Sendable (_ db: Database?, _ isolated: Bool) -> (
            failed: Bool, answer: @Sendable ((any Error)?) -> Void
        )

    private let writer: any DatabaseWriter
    private let queue: DrainQueue<Job>

    /// How many writes wait for the writer now.
    package var waitingWrites: Int { queue.waiting }
    /// How many transactions the writes have taken so far.
    package var transactions: Int { queue.batches }

    /// Batches of at most `maximumBatch` updates on `writer`.
    package init(_ writer: any DatabaseWriter, maximumBatch: Int = 256) {
        self.writer = writer
        queue = DrainQueue(maximumBatch: maximumBatch)
    }

    /// Runs `updates` in a transaction shared with the updates queued beside it, and returns its result once that
    /// transaction committed. An error thrown by `updates` undoes its writes only, and is rethrown as it is.
    package func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await awaitHandOff { deliver in
            enqueue { db, isolated in
                guard let db else { return (true, { deliver(.failure($0 ?? CancellationError())) }) }
                let result: Result<T, any Error>
                do {
                    if isolated {
                        result = .success(try Self.inSavepoint(db) { try updates(db) })
                    } else {
                        result = .success(try updates(db))
                    }
                } catch {
                    result = .failure(error)
                }
                let failed = if case .failure = result { true } else { false }
                return (
                    failed,
                    { commitError in
                        switch (result, commitError) {
                        case (.success, nil), (.failure, _): deliver(result)
                        case (.success, let commitError?): deliver(.failure(commitError))
                        }
                    }
                )
            }
        }
    }

    /// `body` in a savepoint: undone alone if it throws. The statements are prepared once per connection (GRDB's
    /// `inSavepoint` compiles its SQL on every call, a measurable share of a batched update).
    private static func inSavepoint<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.cachedStatement(sql: "SAVEPOINT batched_write").execute()
        do {
            let value = try body()
            try db.cachedStatement(sql: "RELEASE SAVEPOINT batched_write").execute()
            return value
        } catch {
            if db.isInsideTransaction {
                do {
                    try db.cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT batched_write").execute()
                    try db.cachedStatement(sql: "RELEASE SAVEPOINT batched_write").execute()
                } catch {
                    // The failed update's writes cannot be undone alone: end the transaction, which fails the batch.
                    try? db.rollback()
                }
            }
            throw error
        }
    }

    private func enqueue(_ job: @escaping Job) {
        if queue.push(job) { writer.asyncWriteWithoutTransaction { db in self.drain(db) } }
    }

    /// On the writer's thread: commits batches until none is waiting.
    private func drain(_ db: Database) {
        var unrun: [Job] = []
        while true {
            let batch = queue.next(returning: unrun)
            if batch.isEmpty { return }
            unrun = commit(batch, db)
        }
    }

    /// Runs `batch` in one transaction and answers the updates that ran; returns those that did not (the
    /// transaction ended under them), to run in the next.
    private func commit(_ batch: [Job], _ db: Database) -> [Job] {
        do {
            try db.beginPreparedTransaction(immediate: true)
        } catch {
            for job in batch { job(nil, false).answer(error) }
            return []
        }
        // A lone update needs no savepoint: if it fails, the transaction is rolled back.
        let isolated = batch.count > 1
        var answers: [@Sendable ((any Error)?) -> Void] = []
        answers.reserveCapacity(batch.count)
        var commitError: (any Error)?
        var rollBack = false
        do {
            for job in batch {
                let (failed, answer) = job(db, isolated)
                answers.append(answer)
                if failed, !isolated {
                    rollBack = true
                    break
                }
                // An error such as a full disk can end SQLite's transaction under a savepoint: what ran before is
                // gone, so every update that ran fails.
                guard db.isInsideTransaction else {
                    throw DatabaseError(resultCode: .SQLITE_ABORT, message: "The transaction was rolled back.")
                }
            }
            if !rollBack { try db.preparedCommit() }
        } catch {
            commitError = error
            rollBack = true
        }
        if rollBack, db.isInsideTransaction { try? db.rollback() }
        for answer in answers { answer(commitError) }
        return Array(batch.dropFirst(answers.count))
    }
}
