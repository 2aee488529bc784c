package import ServiceLifecycle

/// A store that can be used without running it as a service (a CLI command that opens it, works and ends):
/// ``close()`` releases what it holds.
public protocol ClosableStore: Sendable {
    /// Releases the store's connections; the store is not used afterwards.
    func close() async
}

/// A store that knows that it cannot do its job although it answers reads (``SQLiteWriteHealth``: the disk is
/// full): what a server's `/readyz` reports of its store before probing it.
package protocol StorageHealthReporting {
    /// Why writes fail now, or nil.
    func storageProblem() async -> String?
}

/// The problem `store` reports (``StorageHealthReporting``), or nil.
package func storageProblem(of store: Any) async -> String? {
    await (store as? any StorageHealthReporting)?.storageProblem()
}

/// A store kept in one ``SQLiteDatabase``, whose lifecycle is the database's.
package protocol SQLiteStore: Service, ClosableStore, StorageHealthReporting {
    /// The database.
    var database: SQLiteDatabase { get }
}

extension SQLiteStore {
    /// Why writes fail now (a full disk), or nil.
    package func storageProblem() async -> String? { await database.storageProblem() }

    /// Keeps the database open until graceful shutdown, then closes it.
    package func run() async throws { try await database.run() }

    /// Nothing to release: the file closes when the store is dropped.
    package func close() async {}
}
