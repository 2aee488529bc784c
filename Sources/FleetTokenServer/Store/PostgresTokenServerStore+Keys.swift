import FleetAuthCore
import FleetAuthDatabase
import FleetAuthServerCore
public import Foundation
import NIOCore
import PostgresNIO

// MARK: - Signing keys

extension PostgresTokenServerStore {
    private static func keyRecord(_ row: PostgresRow) throws -> SigningKeyRecord {
        let (kid, family, path, sealed, createdAt, retiredAt) = try row.decode(
            (String, String, String?, ByteBuffer?, Int64, Int64?).self
        )
        guard let tokenFamily = TokenFamily(rawValue: family) else {
            throw StoreError.corrupted("Signing key \(kid) has an unknown family.")
        }
        guard path != nil || sealed != nil else {
            throw StoreError.corrupted("Signing key \(kid) has no key.")
        }
        let material = SigningKeyMaterial(storedPath: path, sealed: sealed.map { Array($0.readableBytesView) })
        return SigningKeyRecord(
            kid: kid,
            family: tokenFamily,
            material: material,
            createdAt: Date(epochSeconds: createdAt),
            retiredAt: retiredAt.map(Date.init(epochSeconds:))
        )
    }

    private static func sorted(_ records: [SigningKeyRecord]) -> [SigningKeyRecord] {
        records.sorted {
            $0.createdAt != $1.createdAt
                ? $0.createdAt < $1.createdAt : $0.kid.utf8.lexicographicallyPrecedes($1.kid.utf8)
        }
    }

    private static func insert(
        _ record: SigningKeyRecord,
        _ connection: PostgresConnection,
        _ database: PostgreSQLDatabase
    )
        async throws
    {
        let sealed: ByteBuffer? = if case .sealed(let bytes) = record.material { ByteBuffer(bytes: bytes) } else { nil }
        try await connection.query(
            """
            INSERT INTO token_signing_keys (kid, family, key_path, sealed_key, created_at)
            VALUES (\(record.kid), \(record.family.rawValue), \(record.material.storedPath), \(sealed),
                    \(record.createdAt.epochSeconds))
            """,
            logger: database.logger
        )
    }

    public func signingKeys() async throws -> [SigningKeyRecord] {
        let rows = try await database.query(
            """
            SELECT kid, family, key_path, sealed_key, created_at, retired_at FROM token_signing_keys
            ORDER BY created_at, kid
            """
        )
        return try rows.map(Self.keyRecord)
    }

    public func addSigningKey(_ record: SigningKeyRecord) async throws {
        try await database.transaction { connection in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(\(Self.signingKeysLock))",
                logger: self.database.logger
            )
            try await connection.query(
                """
                UPDATE token_signing_keys SET retired_at = \(record.createdAt.epochSeconds)
                WHERE family = \(record.family.rawValue) AND retired_at IS NULL
                """,
                logger: self.database.logger
            )
            try await Self.insert(record, connection, self.database)
        }
    }

    public func addFirstSigningKey(_ record: SigningKeyRecord) async throws -> Bool {
        try await database.transaction { connection in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(\(Self.signingKeysLock))",
                logger: self.database.logger
            )
            var exists = false
            for try await _ in try await connection.query(
                "SELECT 1 FROM token_signing_keys WHERE family = \(record.family.rawValue) LIMIT 1",
                logger: self.database.logger
            ) {
                exists = true
            }
            guard !exists else { return false }
            try await Self.insert(record, connection, self.database)
            return true
        }
    }

    public func removeSigningKeys(retiredAtOrBefore cutoff: Date) async throws -> [SigningKeyRecord] {
        let rows = try await database.query(
            """
            DELETE FROM token_signing_keys WHERE retired_at <= \(cutoff.epochSeconds)
            RETURNING kid, family, key_path, sealed_key, created_at, retired_at
            """
        )
        return Self.sorted(try rows.map(Self.keyRecord))
    }
}
