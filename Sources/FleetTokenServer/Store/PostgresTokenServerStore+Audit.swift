import FleetAuthCore
import FleetAuthDatabase
import FleetAuthServerCore
import Foundation
import NIOCore
import PostgresNIO

// MARK: - Audit

extension PostgresTokenServerStore {
    public func append(contentsOf entries: [AuditEntry]) async throws {
        guard !entries.isEmpty else { return }
        // One prepared statement for the whole batch: the columns as arrays, unnested in order.
        _ = try await database.execute(AppendAudit(entries: entries))
    }

    public func recentEntries(limit: Int) async throws -> [AuditEntry] {
        let rows = try await database.query(
            """
            SELECT issued_at, username, token_type, scope, kid, expires_at FROM token_audit
            ORDER BY id DESC LIMIT \(Int64(limit))
            """
        )
        return try rows.map { row in
            let (issuedAt, username, type, scope, kid, expiresAt) = try row.decode(
                (Int64, String, String, String, String, Int64).self
            )
            guard let endpoint = TokenServerEndpoint(name: type) else {
                throw StoreError.corrupted("An audit entry names an unknown endpoint.")
            }
            return AuditEntry(
                issuedAt: Date(epochSeconds: issuedAt),
                username: username,
                endpoint: endpoint,
                scope: scope,
                kid: kid,
                expiresAt: Date(epochSeconds: expiresAt)
            )
        }
    }
}

/// A batch of audit entries, prepared: one INSERT of the columns as arrays.
struct AppendAudit: PostgresPreparedStatement {
    static let name = "fleetauth_token_server_append_audit"
    static let sql = """
        INSERT INTO token_audit (issued_at, username, token_type, scope, kid, expires_at)
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
        """
    typealias Row = Void

    var entries: [AuditEntry]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(entries.map(\.issuedAt.epochSeconds))
        bindings.append(entries.map(\.username))
        bindings.append(entries.map(\.endpoint.name))
        bindings.append(entries.map(\.scope))
        bindings.append(entries.map(\.kid))
        bindings.append(entries.map(\.expiresAt.epochSeconds))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

extension PostgresTokenServerStore: StorageHealthReporting {
    /// Why mints cannot be recorded now, or nil: another session holding a lock on the audit table that blocks
    /// inserts (`LOCK TABLE`, a long `ALTER TABLE`) makes every mint wait out `--database-timeout`, while reads —
    /// and a `SELECT 1` — still answer. Asked for that lock without waiting, in a transaction that changes nothing.
    package func storageProblem() async -> String? {
        do {
            try await database.transaction { connection in
                _ = try await connection.query(
                    "LOCK TABLE token_audit IN ROW EXCLUSIVE MODE NOWAIT",
                    logger: self.database.logger
                )
            }
            return nil
        } catch let error as StoreError where error.message.contains("55P03") {
            return "the audit table is locked by another session, so no token can be minted until it is released"
        } catch {
            // Unreachable or slow: the store's own probe says so.
            return nil
        }
    }
}
