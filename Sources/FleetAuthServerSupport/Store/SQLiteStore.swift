package import ServiceLifecycle

/// A store that can be used without running it as a service (a CLI command that opens it, works and ends):
/// ``close()`` releases what it holds.
public protocol ClosableStore: Sendable {
    /// Releases the store's connections; the store is not used afterwards.
    func close() async
}

/// A store that knows, without asking its database, that it cannot do its job (``SQLiteWriteHealth``: the disk is
/// full): what a server's `/readyz` reports of its store before probing it.
package protocol StorageHealthReporting {
    /// Why writes fail now, or nil.
    var storageProblem: String? { get }
}

/// The problem `store` reports (``StorageHealthReporting``), or nil.
package func storageProblem(of store: Any) -> String? {
    (store as? any StorageHealthReporting)?.storageProblem
}

/// A store kept in one ``SQLiteDatabase``, whose lifecycle is the database's.
package protocol SQLiteStore: Service, ClosableStore, StorageHealthReporting {
    /// The database.
    var database: SQLiteDatabase { get }
}

extension SQLiteStore {
    /// Why writes fail now (a full disk), or nil.
    package var storageProblem: String? { database.health.problem }

    /// Keeps the database open until graceful shutdown, then closes it.
    package func run() async throws { try await database.run() }

    /// Nothing to release: the file closes when the store is dropped.
    package func close() async {}
}
