import FleetAuthCore
import FleetTokenServer
import Foundation
import Testing

/// A way to open the token server's storage: every driver runs the same conformance suite.
struct TokenServerStoreDriver: Sendable, CustomTestStringConvertible {
    let name: String
    let open: @Sendable () throws -> any TokenServerStorage

    var testDescription: String { name }

    static let sqliteFile = TokenServerStoreDriver(name: "SQLite file") {
        let directory = NSTemporaryDirectory() + "token-store-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try SQLiteTokenServerStore(path: directory + "/" + TokenServer.databaseFileName)
    }
    static let sqliteInMemory = TokenServerStoreDriver(name: "SQLite in memory") {
        try SQLiteTokenServerStore(inMemory: ())
    }

    static let all = [sqliteFile, sqliteInMemory]
}

/// What every token-server store must do, by concern.
@Suite("Token server store conformance")
struct TokenServerStoreConformanceTests {
    static let t0 = Date(epochSeconds: 1_800_000_000)
    static let dana = AppUser(username: "dana", role: .driver)

    @Test(
        "users: added once, read back with their hash, removed with their grants and sessions",
        arguments: TokenServerStoreDriver.all)
    func users(_ driver: TokenServerStoreDriver) async throws {
        let store = try driver.open()
        try await store.addUser(Self.dana, passwordHash: "hash-1", createdAt: Self.t0)
        await #expect(throws: StoreError.alreadyExists("")) {
            try await store.addUser(Self.dana, passwordHash: "hash-2", createdAt: Self.t0)
        }
        #expect(try await store.credentials(for: "dana") == StoredCredentials(user: Self.dana, passwordHash: "hash-1"))
        #expect(try await store.credentials(for: "DANA") == nil)
        try await store.addUser(AppUser(username: "ops", role: .operator), passwordHash: "h", createdAt: Self.t0)
        try await store.addGrant(Grant(kind: .vehicle, id: "v2"), to: "dana")
        try await store.addGrant(Grant(kind: .vehicle, id: "v1"), to: "dana")
        try await store.addGrant(Grant(kind: .vehicle, id: "v1"), to: "dana")  // idempotent
        #expect(
            try await store.users() == [
                UserRecord(
                    user: Self.dana, grants: [Grant(kind: .vehicle, id: "v1"), Grant(kind: .vehicle, id: "v2")]),
                UserRecord(user: AppUser(username: "ops", role: .operator), grants: []),
            ])
        await #expect(throws: StoreError.notFound("")) {
            try await store.addGrant(Grant(kind: .vehicle, id: "v1"), to: "nobody")
        }
        try await store.removeGrant(Grant(kind: .vehicle, id: "v2"), from: "dana")
        await #expect(throws: StoreError.notFound("")) {
            try await store.removeGrant(Grant(kind: .vehicle, id: "v2"), from: "dana")
        }
        try await store.addSession(
            SessionRecord(tokenHash: "s1", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 60))
        try await store.removeUser("dana")
        await #expect(throws: StoreError.notFound("")) { try await store.removeUser("dana") }
        #expect(try await store.credentials(for: "dana") == nil)
        #expect(try await store.sessionUser(tokenHash: "s1", at: Self.t0, holding: nil) == nil)
        // A user of the same name later starts with no grants.
        try await store.addUser(Self.dana, passwordHash: "hash-3", createdAt: Self.t0)
        #expect(try await store.users().first?.grants == [])
    }

    @Test(
        "sessions: found by hash until they expire, with the grant answered in the same read",
        arguments: TokenServerStoreDriver.all)
    func sessions(_ driver: TokenServerStoreDriver) async throws {
        let store = try driver.open()
        try await store.addUser(Self.dana, passwordHash: "h", createdAt: Self.t0)
        try await store.addGrant(Grant(kind: .vehicle, id: "v1"), to: "dana")
        try await store.addSession(
            SessionRecord(tokenHash: "s1", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 3600))
        let held = try await store.sessionUser(tokenHash: "s1", at: Self.t0, holding: Grant(kind: .vehicle, id: "v1"))
        #expect(held?.user == Self.dana && held?.granted == true)
        let other = try await store.sessionUser(tokenHash: "s1", at: Self.t0, holding: Grant(kind: .vehicle, id: "v2"))
        #expect(other?.user == Self.dana && other?.granted == false)
        #expect(try await store.sessionUser(tokenHash: "s1", at: Self.t0 + 3599, holding: nil)?.user == Self.dana)
        #expect(try await store.sessionUser(tokenHash: "s1", at: Self.t0 + 3600, holding: nil) == nil)
        #expect(try await store.sessionUser(tokenHash: "s2", at: Self.t0, holding: nil) == nil)
        // A new password ends every session.
        try await store.setPasswordHash("h2", for: "dana")
        #expect(try await store.sessionUser(tokenHash: "s1", at: Self.t0, holding: nil) == nil)
        #expect(try await store.credentials(for: "dana")?.passwordHash == "h2")
        await #expect(throws: StoreError.notFound("")) { try await store.setPasswordHash("h", for: "nobody") }
        try await store.addSession(
            SessionRecord(tokenHash: "s3", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 60))
        try await store.removeSession(tokenHash: "s3")
        #expect(try await store.sessionUser(tokenHash: "s3", at: Self.t0, holding: nil) == nil)
    }

    @Test(
        "signing keys: a new key retires its family's current one; pruning removes exactly the old ones",
        arguments: TokenServerStoreDriver.all)
    func signingKeys(_ driver: TokenServerStoreDriver) async throws {
        let store = try driver.open()
        let first = SigningKeyRecord(kid: "k1", family: .driver, keyPath: "/k1", createdAt: Self.t0)
        let other = SigningKeyRecord(kid: "c1", family: .consumer, keyPath: "/c1", createdAt: Self.t0)
        let second = SigningKeyRecord(kid: "k2", family: .driver, keyPath: "/k2", createdAt: Self.t0 + 100)
        for record in [first, other, second] { try await store.addSigningKey(record) }
        var retiredFirst = first
        retiredFirst.retiredAt = Self.t0 + 100
        #expect(try await store.signingKeys() == [other, retiredFirst, second])
        #expect(try await store.removeSigningKeys(retiredAtOrBefore: Self.t0 + 99) == [])
        #expect(try await store.removeSigningKeys(retiredAtOrBefore: Self.t0 + 100) == [retiredFirst])
        #expect(try await store.signingKeys() == [other, second])
    }

    @Test("audit: every entry kept, newest first", arguments: TokenServerStoreDriver.all)
    func audit(_ driver: TokenServerStoreDriver) async throws {
        let store = try driver.open()
        let entries = (0..<5).map { index in
            AuditEntry(
                issuedAt: Self.t0 + TimeInterval(index), username: "dana",
                endpoint: index.isMultiple(of: 2) ? .driver : .fleetReader,
                scope: #"{"vehicleid":"v\#(index)"}"#, kid: "k1", expiresAt: Self.t0 + 3600)
        }
        for entry in entries { try await store.append(entry) }
        #expect(try await store.recentEntries(limit: 3) == entries.reversed().prefix(3).map { $0 })
        #expect(try await store.recentEntries(limit: 10).count == 5)
    }
}
