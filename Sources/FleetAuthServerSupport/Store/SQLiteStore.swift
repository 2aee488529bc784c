package import ServiceLifecycle

/// A store that can be used without running it as a service (a CLI command that opens it, works and ends):
/// ``close()`` releases what it holds.
public protocol ClosableStore: Sendable {
    /// Releases the store's connections; the store is not used afterwards.
    func close() async
}

/// A store kept in one ``SQLiteDatabase``, whose lifecycle is the database's.
package protocol SQLiteStore: Service, ClosableStore {
    /// The database.
    var database: SQLiteDatabase { get }
}

extension SQLiteStore {
    /// Keeps the database open until graceful shutdown, then closes it.
    package func run() async throws { try await database.run() }

    /// Nothing to release: the file closes when the store is dropped.
    package func close() async {}
}
