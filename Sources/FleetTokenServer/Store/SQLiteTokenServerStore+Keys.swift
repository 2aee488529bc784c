import FleetAuthCore
import FleetAuthServerCore
public import Foundation
import GRDB

extension SQLiteTokenServerStore {
    private static let keyColumns = "SELECT kid, family, key_path, sealed_key, created_at, retired_at FROM signing_keys"

    private static func keyRecords(_ db: Database, _ condition: String, _ arguments: StatementArguments) throws
        -> [SigningKeyRecord]
    {
        try Row.fetchAll(
            db.cachedStatement(sql: "\(keyColumns) \(condition) ORDER BY created_at, kid"),
            arguments: arguments
        ).map { row in
            guard let family = TokenFamily(rawValue: row["family"]) else {
                throw StoreError.corrupted("Signing key \(row["kid"] as String) has an unknown family.")
            }
            let path = row["key_path"] as String?
            let sealed = (row["sealed_key"] as Data?).map { Array($0) }
            guard path != nil || sealed != nil else {
                throw StoreError.corrupted("Signing key \(row["kid"] as String) has no key.")
            }
            let material = SigningKeyMaterial(storedPath: path, sealed: sealed)
            return SigningKeyRecord(
                kid: row["kid"],
                family: family,
                material: material,
                createdAt: Date(epochSeconds: row["created_at"]),
                retiredAt: (row["retired_at"] as Int64?).map(Date.init(epochSeconds:))
            )
        }
    }

    private static func insert(_ record: SigningKeyRecord, _ db: Database) throws {
        let path = record.material.storedPath
        let sealed: Data? = if case .sealed(let bytes) = record.material { Data(bytes) } else { nil }
        try db.cachedStatement(
            sql: "INSERT INTO signing_keys (kid, family, key_path, sealed_key, created_at) VALUES (?, ?, ?, ?, ?)"
        ).execute(arguments: [record.kid, record.family.rawValue, path, sealed, record.createdAt.epochSeconds])
    }

    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await writer.read { db in try Self.keyRecords(db, "", []) }
    }

    public func addSigningKey(_ record: SigningKeyRecord) async throws {
        try await database.writeAlone { db in
            try db.cachedStatement(
                sql: "UPDATE signing_keys SET retired_at = ? WHERE family = ? AND retired_at IS NULL"
            ).execute(arguments: [record.createdAt.epochSeconds, record.family.rawValue])
            try Self.insert(record, db)
        }
    }

    public func addFirstSigningKey(_ record: SigningKeyRecord) async throws -> Bool {
        try await database.writeAlone { db in
            let existing = try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM signing_keys WHERE family = ?"),
                arguments: [record.family.rawValue]
            )
            guard existing == nil else { return false }
            try Self.insert(record, db)
            return true
        }
    }

    public func removeSigningKeys(retiredAtOrBefore cutoff: Date) async throws -> [SigningKeyRecord] {
        try await database.writeAlone { db in
            let removed = try Self.keyRecords(db, "WHERE retired_at <= ?", [cutoff.epochSeconds])
            try db.cachedStatement(sql: "DELETE FROM signing_keys WHERE retired_at <= ?").execute(arguments: [
                cutoff.epochSeconds
            ])
            return removed
        }
    }
}
