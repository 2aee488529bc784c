public import ServiceLifecycle

/// A store kept in one ``SQLiteDatabase``, whose lifecycle is the database's.
public protocol SQLiteStore: Service {
    /// The database.
    var database: SQLiteDatabase { get }
}

extension SQLiteStore {
    /// Keeps the database open until graceful shutdown, then closes it.
    public func run() async throws { try await database.run() }
}
