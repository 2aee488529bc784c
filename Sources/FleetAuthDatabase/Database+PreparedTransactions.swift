import GRDB

extension Database {
    /// `BEGIN IMMEDIATE TRANSACTION` (or `DEFERRED`), prepared once per connection: GRDB's `beginTransaction`
    /// compiles its SQL on every call, which the batched writes and reads of `SQLiteGroupCommit` and
    /// `SQLiteGroupRead` would pay per batch.
    func beginPreparedTransaction(immediate: Bool) throws {
        try cachedStatement(sql: immediate ? "BEGIN IMMEDIATE TRANSACTION" : "BEGIN DEFERRED TRANSACTION").execute()
    }

    /// `COMMIT TRANSACTION`, prepared once per connection.
    func preparedCommit() throws {
        try cachedStatement(sql: "COMMIT TRANSACTION").execute()
    }
}
