import FleetAuthServerCore
package import Logging
package import PostgresNIO

/// A database's schema as numbered steps per scope (`emulator`, `token-server`): each step runs once, in order, in
/// the transaction that records it. `fleetauth_migrations` records what was applied; a transaction-scoped
/// advisory lock makes instances that start together take turns.
package struct PostgresMigrations: Sendable {
    package struct Step: Sendable {
        package var version: Int
        package var name: String
        package var statements: [String]
        /// Work the statements cannot say (rewriting rows in Swift), run after them in the same transaction.
        package var then: (@Sendable (PostgresConnection, Logger) async throws -> Void)?

        package init(
            version: Int,
            name: String,
            statements: [String],
            then: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil
        ) {
            self.version = version
            self.name = name
            self.statements = statements
            self.then = then
        }
    }

    package var scope: String
    package var steps: [Step]

    package init(scope: String, steps: [Step]) {
        self.scope = scope
        self.steps = steps
    }

    /// The advisory lock key every FleetAuth instance takes while migrating ("FA" "MG" in ASCII).
    static let lockKey: Int64 = 0x4641_4D47

    func apply(on database: PostgreSQLDatabase) async throws(StoreError) {
        let scope = self.scope
        let steps = self.steps
        do {
            try await database.transaction(bounded: false) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: database.logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS fleetauth_migrations (
                        scope TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL,
                        applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (scope, version))
                    """,
                    logger: database.logger
                )
                var applied: Set<Int> = []
                for try await version in try await connection.query(
                    "SELECT version FROM fleetauth_migrations WHERE scope = \(scope)",
                    logger: database.logger
                ).decode(Int.self) {
                    applied.insert(version)
                }
                if let newest = applied.max(), newest > (steps.map(\.version).max() ?? 0) {
                    throw StoreError.corrupted(
                        "The \(scope) schema in \(database.url.location) is at version \(newest), newer than this "
                            + "FleetAuth knows; upgrade FleetAuth."
                    )
                }
                for step in steps.sorted(by: { $0.version < $1.version }) where !applied.contains(step.version) {
                    for statement in step.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: database.logger)
                    }
                    try await step.then?(connection, database.logger)
                    try await connection.query(
                        "INSERT INTO fleetauth_migrations (scope, version, name) VALUES (\(scope), \(step.version), \(step.name))",
                        logger: database.logger
                    )
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(
                "Cannot migrate the \(scope) schema in \(database.url.location): \(PostgreSQLDatabase.reason(error))."
            )
        }
    }
}
