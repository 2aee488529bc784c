import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import PostgresNIO
import Testing

/// A way to open the token server's storage: every driver runs the same conformance suite. `open` gives the store
/// and a way to open another instance on the same data (for the persistent drivers), as a second server would.
struct TokenServerStoreDriver: Sendable, CustomTestStringConvertible {
    typealias Opened = (store: any TokenServerStorage, another: (@Sendable () async throws -> any TokenServerStorage)?)

    let name: String
    let open: @Sendable () async throws -> Opened

    var testDescription: String { name }

    static let sqliteFile = TokenServerStoreDriver(name: "SQLite file") {
        let directory = try TestResources.required().temporaryDirectory("token-store")
        let path = directory + "/" + TokenServer.databaseFileName
        return (try SQLiteTokenServerStore(path: path), { try SQLiteTokenServerStore(path: path) })
    }
    static let sqliteInMemory = TokenServerStoreDriver(name: "SQLite in memory") {
        (try SQLiteTokenServerStore(inMemory: ()), nil)
    }
    /// A fresh database on the PostgreSQL server the tests are given (see ``PostgresTestServer``).
    static let postgres = TokenServerStoreDriver(name: "PostgreSQL") {
        let resources = try TestResources.required()
        let url = try await resources.freshDatabase()
        return (
            try await PostgresTokenServerStore.connect(url, maximumConnections: 4, in: resources.pools),
            { try await PostgresTokenServerStore.connect(url, maximumConnections: 4, in: resources.pools) }
        )
    }

    static let all = [sqliteFile, sqliteInMemory] + (PostgresTestServer.url == nil ? [] : [postgres])
    static let persistent = [sqliteFile] + (PostgresTestServer.url == nil ? [] : [postgres])
}

/// What every token-server store must do, by concern.
@Suite("Token server store conformance", .temporaryResources)
struct TokenServerStoreConformanceTests {
    static let t0 = Date(epochSeconds: 1_800_000_000)
    static let dana = AppUser(username: "dana", role: .driver)

    @Test(
        "users: added once, read back with their hash, removed with their grants and sessions",
        arguments: TokenServerStoreDriver.all
    )
    func users(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.addUser(Self.dana, passwordHash: "hash-1", createdAt: Self.t0)
        await expectCode(StoreError.alreadyExists("")) {
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
                    user: Self.dana,
                    grants: [Grant(kind: .vehicle, id: "v1"), Grant(kind: .vehicle, id: "v2")]
                ),
                UserRecord(user: AppUser(username: "ops", role: .operator), grants: []),
            ]
        )
        await expectCode(StoreError.notFound("")) {
            try await store.addGrant(Grant(kind: .vehicle, id: "v1"), to: "nobody")
        }
        try await store.removeGrant(Grant(kind: .vehicle, id: "v2"), from: "dana")
        await expectCode(StoreError.notFound("")) {
            try await store.removeGrant(Grant(kind: .vehicle, id: "v2"), from: "dana")
        }
        try await store.addSession(
            SessionRecord(tokenHash: "s1", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 60)
        )
        try await store.removeUser("dana")
        await expectCode(StoreError.notFound("")) { try await store.removeUser("dana") }
        #expect(try await store.credentials(for: "dana") == nil)
        #expect(try await store.sessionUser(tokenHash: "s1", at: Self.t0, holding: nil) == nil)
        // A user of the same name later starts with no grants.
        try await store.addUser(Self.dana, passwordHash: "hash-3", createdAt: Self.t0)
        #expect(try await store.users().first?.grants == [])
    }

    @Test(
        "sessions: found by hash until they expire, with the grant answered in the same read",
        arguments: TokenServerStoreDriver.all
    )
    func sessions(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.addUser(Self.dana, passwordHash: "h", createdAt: Self.t0)
        try await store.addGrant(Grant(kind: .vehicle, id: "v1"), to: "dana")
        try await store.addSession(
            SessionRecord(tokenHash: "s1", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 3600)
        )
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
        await expectCode(StoreError.notFound("")) { try await store.setPasswordHash("h", for: "nobody") }
        try await store.addSession(
            SessionRecord(tokenHash: "s3", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 60)
        )
        try await store.removeSession(tokenHash: "s3")
        #expect(try await store.sessionUser(tokenHash: "s3", at: Self.t0, holding: nil) == nil)
    }

    @Test(
        "concurrent session lookups each get their own session's user and grant",
        arguments: TokenServerStoreDriver.all
    )
    func concurrentSessions(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        var random = SystemRandomNumberGenerator()
        // Ten users holding random vehicles; each has a live and an expired session.
        var holdings: [String: Set<String>] = [:]
        for index in 0..<10 {
            let username = "user\(index)"
            try await store.addUser(AppUser(username: username, role: .driver), passwordHash: "h", createdAt: Self.t0)
            let vehicles = Set((0..<10).filter { _ in Bool.random(using: &random) }.map { "v\($0)" })
            for vehicle in vehicles { try await store.addGrant(Grant(kind: .vehicle, id: vehicle), to: username) }
            holdings[username] = vehicles
            try await store.addSession(
                SessionRecord(
                    tokenHash: "live\(index)",
                    username: username,
                    createdAt: Self.t0,
                    expiresAt: Self.t0 + 60
                )
            )
            try await store.addSession(
                SessionRecord(tokenHash: "old\(index)", username: username, createdAt: Self.t0, expiresAt: Self.t0 + 1)
            )
        }
        // Lookups of live, expired and unknown sessions, with a held grant, one not held, or none.
        let lookups = (0..<300).map { _ in
            let user = Int.random(in: 0..<10, using: &random)
            let session = ["live", "old", "none"].randomElement(using: &random)! + "\(user)"
            let grant = Bool.random(using: &random) ? Grant(kind: .vehicle, id: "v\(Int.random(in: 0..<10))") : nil
            return (session: session, user: user, grant: grant)
        }
        let answers = try await withThrowingTaskGroup(of: (Int, (user: AppUser, granted: Bool)?).self) { group in
            for (index, lookup) in lookups.enumerated() {
                group.addTask {
                    (
                        index,
                        try await store.sessionUser(tokenHash: lookup.session, at: Self.t0 + 30, holding: lookup.grant)
                    )
                }
            }
            var answers = [(user: AppUser, granted: Bool)?](repeating: nil, count: lookups.count)
            for try await (index, answer) in group { answers[index] = answer }
            return answers
        }
        for (lookup, answer) in zip(lookups, answers) {
            let username = "user\(lookup.user)"
            if lookup.session.hasPrefix("live") {
                #expect(answer?.user == AppUser(username: username, role: .driver), "\(lookup)")
                let held = lookup.grant.map { holdings[username]!.contains($0.id) } ?? false
                #expect(answer?.granted == held, "\(lookup)")
            } else {
                #expect(answer == nil, "\(lookup)")
            }
        }
    }

    @Test(
        "signing keys: a new key retires its family's current one; pruning removes exactly the old ones",
        arguments: TokenServerStoreDriver.all
    )
    func signingKeys(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        let first = SigningKeyRecord(kid: "k1", family: .driver, material: .file(path: "/k1"), createdAt: Self.t0)
        let other = SigningKeyRecord(
            kid: "c1",
            family: .consumer,
            material: .sealed([1, 2, 3, 0, 255]),
            createdAt: Self.t0
        )
        let second = SigningKeyRecord(
            kid: "k2",
            family: .driver,
            material: .file(path: "/k2"),
            createdAt: Self.t0 + 100
        )
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
        let store = try await driver.open().store
        let entries = (0..<5).map { index in
            AuditEntry(
                issuedAt: Self.t0 + TimeInterval(index),
                username: "dana",
                endpoint: index.isMultiple(of: 2) ? .driver : .fleetReader,
                scope: #"{"vehicleid":"v\#(index)"}"#,
                kid: "k1",
                expiresAt: Self.t0 + 3600
            )
        }
        for entry in entries { try await store.append(entry) }
        #expect(try await store.recentEntries(limit: 3) == entries.reversed().prefix(3).map { $0 })
        #expect(try await store.recentEntries(limit: 10).count == 5)
    }
    @Test(
        "first keys: one per family however many instances start at once; pruning hands each key to one instance",
        arguments: TokenServerStoreDriver.persistent
    )
    func firstKeysAndPruningAcrossInstances(_ driver: TokenServerStoreDriver) async throws {
        let (store, another) = try await driver.open()
        let reopen = try #require(another)
        let second = try await reopen()
        let candidates = (0..<8).map { index in
            SigningKeyRecord(
                kid: "k\(index)",
                family: .driver,
                material: .sealed([UInt8(index)]),
                createdAt: Self.t0
            )
        }
        let added = try await withThrowingTaskGroup(of: Bool.self) { group in
            for (index, record) in candidates.enumerated() {
                let target = index.isMultiple(of: 2) ? store : second
                group.addTask { try await target.addFirstSigningKey(record) }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(added == 1)
        let keys = try await second.signingKeys()
        #expect(keys.count == 1 && keys.first?.retiredAt == nil)
        // Rotations through either instance: every key but the newest retired; each pruned by exactly one caller.
        for index in 1...6 {
            let target = index.isMultiple(of: 2) ? store : second
            try await target.addSigningKey(
                SigningKeyRecord(
                    kid: "r\(index)",
                    family: .driver,
                    material: .file(path: "/r\(index)"),
                    createdAt: Self.t0 + TimeInterval(index)
                )
            )
        }
        #expect(try await store.signingKeys().filter { $0.retiredAt == nil }.map(\.kid) == ["r6"])
        let pruned = try await withThrowingTaskGroup(of: [String].self) { group in
            for target in [store, second, store, second] {
                group.addTask { try await target.removeSigningKeys(retiredAtOrBefore: Self.t0 + 100).map(\.kid) }
            }
            return try await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(pruned.sorted() == (keys.map(\.kid) + ["r1", "r2", "r3", "r4", "r5"]).sorted())
        #expect(try await second.signingKeys().map(\.kid) == ["r6"])
    }

    @Test(
        "login throttle: counts kept per key, updated atomically, forgotten only when they cannot lock",
        arguments: TokenServerStoreDriver.all
    )
    func throttleEntries(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        let now = Self.t0
        #expect(try await store.throttleEntries(keys: ["user:dana"], at: now) == [:])
        let locked = ThrottleEntry(
            failures: 5,
            firstFailure: now,
            lockedUntil: now + 30,
            forgetAfter: now + 900
        )
        try await store.updateThrottleEntries(keys: ["user:dana", "address:10.0.0.1"], at: now) { current in
            #expect(current.isEmpty)
            return [
                "user:dana": locked,
                "address:10.0.0.1": ThrottleEntry(
                    failures: 1,
                    firstFailure: now,
                    lockedUntil: nil,
                    forgetAfter: now + 0.5
                ),
            ]
        }
        #expect(
            try await store.throttleEntries(keys: ["user:dana", "address:10.0.0.1", "user:x"], at: now) == [
                "user:dana": locked,
                "address:10.0.0.1": ThrottleEntry(
                    failures: 1,
                    firstFailure: now,
                    lockedUntil: nil,
                    forgetAfter: now + 0.5
                ),
            ]
        )
        // Milliseconds are kept; an entry past its time is gone.
        #expect(try await store.throttleEntries(keys: ["address:10.0.0.1"], at: now + 0.5) == [:])
        // Byte-exact keys: a key with a NUL is its own key (or, where the database cannot hold it, none at all).
        #expect(try await store.throttleEntries(keys: ["user:dana\u{0}"], at: now).isEmpty)
        #expect(try await store.throttleEntries(keys: ["user:DANA"], at: now).isEmpty)
        try await store.removeThrottleEntries(keys: ["user:dana"])
        #expect(try await store.throttleEntries(keys: ["user:dana"], at: now) == [:])
    }

    @Test(
        "login throttle: concurrent failures from two instances are all counted, and survive a restart",
        arguments: TokenServerStoreDriver.persistent
    )
    func throttleAcrossInstances(_ driver: TokenServerStoreDriver) async throws {
        let (store, another) = try await driver.open()
        let reopen = try #require(another)
        let second = try await reopen()
        var policy = LoginThrottle.Policy()
        policy.failuresBeforeLockout = 1000
        let throttles = [LoginThrottle(policy: policy, store: store), LoginThrottle(policy: policy, store: second)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    try await throttles[index % 2].recordFailure(username: "dana", address: nil, now: Self.t0)
                }
            }
            try await group.waitForAll()
        }
        #expect(try await second.throttleEntries(keys: ["user:dana"], at: Self.t0)["user:dana"]?.failures == 40)
        // A lockout recorded through one instance holds on the other, and on a store opened afterwards.
        let strict = LoginThrottle(store: store)
        for _ in 0..<5 { try await strict.recordFailure(username: "erin", address: nil, now: Self.t0) }
        let restarted = try await reopen()
        for target in [second, restarted] {
            await #expect(throws: GoogleAPIError.self) {
                try await LoginThrottle(store: target).check(username: "erin", address: nil, now: Self.t0 + 29)
            }
            try await LoginThrottle(store: target).check(username: "erin", address: nil, now: Self.t0 + 30)
        }
    }

    /// What each of `count` parallel logins was answered: 200, 401 (evaluated) or 429 (refused before any password
    /// was checked); attempt `index` goes to `services[index % 2]` with what `attempt(index)` names.
    static func attempts(
        _ count: Int,
        _ services: [LoginService],
        _ attempt: @escaping @Sendable (Int) -> (username: String, password: String, address: String)
    ) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<count {
                group.addTask {
                    let (username, password, address) = attempt(index)
                    return try await Self.status {
                        _ = try await services[index % 2].login(
                            username: username,
                            password: password,
                            address: address
                        )
                    }
                }
            }
            var statuses: [Int] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
    }

    static func status(_ body: () async throws -> Void) async throws -> Int {
        do {
            try await body()
            return 200
        } catch let error as GoogleAPIError {
            if error.code == .unauthenticated { return 401 }
            if error.code == .resourceExhausted { return 429 }
            throw error
        }
    }

    @Test(
        "login: parallel guesses through two instances are evaluated at most up to the limit, per user and per address",
        arguments: TokenServerStoreDriver.persistent
    )
    func loginRace(_ driver: TokenServerStoreDriver) async throws {
        let (store, another) = try await driver.open()
        let reopen = try #require(another)
        let second = try await reopen()
        // A hash slow enough (~15 ms) that checking before and counting after would let guesses through in parallel.
        let hasher = PasswordHasher(cost: 8)
        try await store.addUser(Self.dana, passwordHash: try await hasher.hash("right"), createdAt: Self.t0)
        let clock = ManualClock(date: Self.t0)
        let services = [store, second].map { storage in
            LoginService(
                users: storage,
                sessions: storage,
                hasher: hasher,
                throttle: LoginThrottle(store: storage),
                clock: clock
            )
        }
        // 40 guesses for one user from 40 addresses, the right password the 36th: 5 at most are checked.
        let forDana = try await Self.attempts(40, services) {
            ("dana", $0 == 35 ? "right" : "guess-\($0)", "192.0.2.\($0)")
        }
        #expect(forDana.count { $0 != 429 } <= 5, "\(forDana)")
        #expect(forDana.count { $0 == 429 } >= 35)
        // 40 guesses from one address for 40 users: 20 at most are checked.
        let fromOne = try await Self.attempts(40, services) { ("user-\($0)", "guess", "198.51.100.7") }
        #expect(fromOne.count { $0 != 429 } <= 20, "\(fromOne)")
        #expect(fromOne.count { $0 == 429 } >= 20)
        // A success gives its reservation back: the address is not charged for logins that worked.
        try await store.addUser(
            AppUser(username: "erin", role: .driver),
            passwordHash: try await hasher.hash("pw"),
            createdAt: Self.t0
        )
        for index in 0..<30 {
            _ = try await services[index % 2].login(username: "erin", password: "pw", address: "203.0.113.9")
        }
        #expect(
            try await second.throttleEntries(keys: ["address:203.0.113.9"], at: Self.t0)["address:203.0.113.9"]?
                .failures ?? 0 == 0
        )
    }

    @Test(
        "password hashes: counted by bcrypt cost; upgraded only while unchanged, keeping sessions",
        arguments: TokenServerStoreDriver.all
    )
    func passwordHashUpgrade(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.addUser(Self.dana, passwordHash: "$2b$12$old", createdAt: Self.t0)
        try await store.addUser(AppUser(username: "ops", role: .operator), passwordHash: "$2b$10$x", createdAt: Self.t0)
        try await store.addUser(AppUser(username: "odd", role: .driver), passwordHash: "not bcrypt", createdAt: Self.t0)
        #expect(try await store.passwordHashCosts() == [12: 1, 10: 1])
        let session = SessionRecord(tokenHash: "t1", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 3600)
        try await store.addSession(session)
        #expect(try await store.upgradePasswordHash("$2b$10$new", for: "dana", replacing: "$2b$12$other") == false)
        #expect(try await store.upgradePasswordHash("$2b$10$new", for: "nobody", replacing: "$2b$12$old") == false)
        #expect(try await store.upgradePasswordHash("$2b$10$new", for: "dana", replacing: "$2b$12$old"))
        #expect(try await store.credentials(for: "dana")?.passwordHash == "$2b$10$new")
        #expect(try await store.sessionUser(tokenHash: "t1", at: Self.t0, holding: nil)?.user == Self.dana)
        #expect(try await store.passwordHashCosts() == [10: 2])
    }

    @Test("audit: a batch is appended in order, in one call", arguments: TokenServerStoreDriver.all)
    func auditBatch(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        let entries = (0..<300).map { index in
            AuditEntry(
                issuedAt: Self.t0 + TimeInterval(index),
                username: "u\(index % 7)",
                endpoint: .driver,
                scope: #"{"vehicleid":"v\#(index)"}"#,
                kid: "k",
                expiresAt: Self.t0 + 3600
            )
        }
        try await store.append(contentsOf: Array(entries[..<150]))
        try await GroupCommitAuditLog(store).append(contentsOf: Array(entries[150...]))
        #expect(try await store.recentEntries(limit: 1000) == entries.reversed())
    }

    @Test(
        "names no user can have find nothing: NUL, case, and the store's answers for them",
        arguments: TokenServerStoreDriver.all
    )
    func unusualNames(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.addUser(Self.dana, passwordHash: "h", createdAt: Self.t0)
        #expect(try await store.credentials(for: "dana\u{0}") == nil)
        #expect(try await store.credentials(for: "dana\u{0}x") == nil)
        await expectCode(StoreError.notFound("")) { try await store.removeUser("dana\u{0}") }
        await expectCode(StoreError.notFound("")) {
            try await store.addGrant(Grant(kind: .vehicle, id: "v1"), to: "dana\u{0}")
        }
        #expect(try await store.sessionUser(tokenHash: "s\u{0}", at: Self.t0, holding: nil) == nil)
        #expect(try await store.users().map(\.user) == [Self.dana])
    }
}

extension TokenServerStoreConformanceTests {
    @Test(
        "retention: audit entries before the cutoff go oldest first, in batches; expired sessions and forgotten failures go",
        arguments: TokenServerStoreDriver.all
    )
    func retention(_ driver: TokenServerStoreDriver) async throws {
        let store = try await driver.open().store
        let entries = (0..<7).map { index in
            AuditEntry(
                issuedAt: Self.t0 + TimeInterval(index * 10),
                username: "dana",
                endpoint: .driver,
                scope: #"{"vehicleid":"v\#(index)"}"#,
                kid: "k1",
                expiresAt: Self.t0 + 3600
            )
        }
        try await store.append(contentsOf: entries)
        // Entries 0…4 are older than t0 + 45: two batches of 2 and one of 1, then nothing.
        let cutoff = Self.t0 + 45
        #expect(try await store.pruneAudit(issuedBefore: cutoff, limit: 2) == 2)
        #expect(try await store.recentEntries(limit: 10) == entries.suffix(5).reversed())
        #expect(try await store.pruneAudit(issuedBefore: cutoff, limit: 2) == 2)
        #expect(try await store.pruneAudit(issuedBefore: cutoff, limit: 2) == 1)
        #expect(try await store.pruneAudit(issuedBefore: cutoff, limit: 2) == 0)
        #expect(try await store.recentEntries(limit: 10) == entries.suffix(2).reversed())

        try await store.addUser(Self.dana, passwordHash: "x", createdAt: Self.t0)
        try await store.addSession(
            SessionRecord(tokenHash: "old", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 60)
        )
        try await store.addSession(
            SessionRecord(tokenHash: "live", username: "dana", createdAt: Self.t0, expiresAt: Self.t0 + 3600)
        )
        try await store.updateThrottleEntries(keys: ["user:a", "user:b"], at: Self.t0) { _ in
            [
                "user:a": ThrottleEntry(
                    failures: 1,
                    firstFailure: Self.t0,
                    lockedUntil: nil,
                    forgetAfter: Self.t0 + 60
                ),
                "user:b": ThrottleEntry(
                    failures: 1,
                    firstFailure: Self.t0,
                    lockedUntil: nil,
                    forgetAfter: Self.t0 + 900
                ),
            ]
        }
        #expect(try await store.pruneExpired(at: Self.t0 + 120, limit: 100) == 2)
        #expect(try await store.pruneExpired(at: Self.t0 + 120, limit: 100) == 0)
        // Asked at a time both were still valid: the pruned ones are gone, the others kept.
        #expect(try await store.sessionUser(tokenHash: "old", at: Self.t0, holding: nil) == nil)
        #expect(try await store.sessionUser(tokenHash: "live", at: Self.t0, holding: nil)?.user.username == "dana")
        #expect(try await store.throttleEntries(keys: ["user:a", "user:b"], at: Self.t0).keys.sorted() == ["user:b"])
    }
}

extension TokenServerStoreConformanceTests {
    @Test(
        "retention on one PostgreSQL database: while one instance prunes, another skips its turn",
        arguments: PostgresTestServer.url == nil ? [] : [TokenServerStoreDriver.postgres]
    )
    func pruningTakesTurns(_ driver: TokenServerStoreDriver) async throws {
        let opened = try await driver.open()
        let first = try #require(opened.store as? PostgresTokenServerStore)
        let another = try #require(opened.another)
        let second = try await another()
        let old = AuditEntry(
            issuedAt: Self.t0,
            username: "dana",
            endpoint: .driver,
            scope: "{}",
            kid: "k1",
            expiresAt: Self.t0
        )
        try await first.append(contentsOf: [old, old, old])
        // The first instance is pruning (it holds the pruning lock in its transaction): the second prunes nothing.
        let whileLocked: Int = try await first.database.transaction { connection in
            let lock: PostgresQuery = "SELECT pg_advisory_xact_lock(\(PostgresTokenServerStore.pruningLock))"
            _ = try await connection.query(lock, logger: first.database.logger)
            return try await second.pruneAudit(issuedBefore: Self.t0 + 1, limit: 10)
        }
        #expect(whileLocked == 0)
        #expect(try await second.pruneAudit(issuedBefore: Self.t0 + 1, limit: 10) == 3)
    }
}

extension TokenServerStoreConformanceTests {
    @Test(
        "a lock on the audit table (every mint would wait it out) is a storage problem, for /readyz; released, none",
        arguments: PostgresTestServer.url == nil ? [] : [TokenServerStoreDriver.postgres]
    )
    func lockedAuditTable(_ driver: TokenServerStoreDriver) async throws {
        let opened = try await driver.open()
        let first = try #require(opened.store as? PostgresTokenServerStore)
        let second = try #require(try await opened.another?() as? PostgresTokenServerStore)
        #expect(await second.storageProblem() == nil)
        let whileLocked: String? = try await first.database.transaction { connection in
            _ = try await connection.query(
                "LOCK TABLE token_audit IN ACCESS EXCLUSIVE MODE",
                logger: first.database.logger
            )
            return await second.storageProblem()
        }
        #expect(
            whileLocked?.contains("the audit table is locked by another session") == true,
            "\(whileLocked ?? "nil")"
        )
        #expect(await second.storageProblem() == nil)
    }
}
