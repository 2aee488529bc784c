import Dispatch
import FleetAuthDatabase
import FleetAuthServerTesting
import GRDB
import Testing

@Suite("SQLite writes share transactions", .temporaryResources)
struct SQLiteGroupCommitTests {
    struct Refused: Error, Equatable {}

    static func database() throws -> SQLiteDatabase {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "CREATE TABLE parents (id INTEGER PRIMARY KEY)")
            try db.execute(
                sql: """
                    CREATE TABLE rows (id INTEGER PRIMARY KEY, parent INTEGER
                    REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED)
                    """
            )
            try db.execute(sql: "CREATE TABLE counter (value INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO counter VALUES (0)")
        }
        let directory = try TestResources.required().temporaryDirectory("group-commit")
        return try SQLiteDatabase(path: directory + "/test.sqlite", migrator: migrator)
    }

    static func ids(_ database: SQLiteDatabase) async throws -> [Int] {
        try await database.writer.read { db in try Int.fetchAll(db, sql: "SELECT id FROM rows ORDER BY id") }
    }

    /// Holds the writer's thread inside a write until `release` is signalled, so the writes queued meanwhile
    /// form one batch; returns the held write's task once it runs.
    static func holdWriter(_ database: SQLiteDatabase) async throws -> (Task<Void, any Error>, DispatchSemaphore) {
        let release = DispatchSemaphore(value: 0)
        let running = DispatchSemaphore(value: 0)
        let held = Task {
            try await database.write { _ in
                running.signal(); release.wait()
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                running.wait()
                continuation.resume()
            }
        }
        return (held, release)
    }

    /// Waits until `count` writes are queued (see ``Waiting``: the limit only stops a hang).
    static func waitUntilQueued(_ count: Int, _ database: SQLiteDatabase) async throws {
        try await Waiting.until("\(count) writes queued", every: .milliseconds(1)) {
            database.batches.waitingWrites >= count
        }
    }

    @Test("concurrent writes all commit, the waiting ones in one transaction, in the order they were queued")
    func batches() async throws {
        let database = try Self.database()
        let (held, release) = try await Self.holdWriter(database)
        let before = database.batches.transactions
        var tasks: [Task<Int, any Error>] = []
        for id in 1...50 {
            tasks.append(
                Task {
                    try await database.write { db in
                        try db.execute(sql: "INSERT INTO rows (id) VALUES (?)", arguments: [id])
                        try db.execute(sql: "UPDATE counter SET value = value * 2 + ?", arguments: [id % 2])
                        return try Int.fetchOne(db, sql: "SELECT count(*) FROM rows")!
                    }
                }
            )
            // One at a time, so the queue's order is known.
            try await Self.waitUntilQueued(id, database)
        }
        release.signal()
        try await held.value
        var seen: [Int] = []
        for task in tasks { seen.append(try await task.value) }
        #expect(seen == Array(1...50), "each write saw the writes queued before it, and only those")
        #expect(database.batches.transactions - before == 1, "the 50 waiting writes took one transaction")
        #expect(try await Self.ids(database) == Array(1...50))
        var expected = 0
        for id in 1...50 { expected = expected * 2 + id % 2 }
        let counter = try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT value FROM counter") }
        #expect(counter == expected, "the updates of one row applied in queue order")
    }

    @Test("a write that throws in a batch is undone alone, and its caller gets its error")
    func failureInBatch() async throws {
        let database = try Self.database()
        let (held, release) = try await Self.holdWriter(database)
        var tasks: [Task<Void, any Error>] = []
        for id in 1...3 {
            tasks.append(
                Task {
                    try await database.write { db in
                        try db.execute(sql: "INSERT INTO rows (id) VALUES (?)", arguments: [id])
                        if id == 2 { throw Refused() }
                    }
                }
            )
            try await Self.waitUntilQueued(id, database)
        }
        release.signal()
        try await held.value
        try await tasks[0].value
        await #expect(throws: Refused.self) { try await tasks[1].value }
        try await tasks[2].value
        #expect(try await Self.ids(database) == [1, 3])
        // The same id again: the savepoint was rolled back, so nothing of the failed write is left.
        try await database.write { db in try db.execute(sql: "INSERT INTO rows (id) VALUES (2)") }
        #expect(try await Self.ids(database) == [1, 2, 3])
    }

    @Test("a lone write that throws leaves nothing")
    func loneFailure() async throws {
        let database = try Self.database()
        await #expect(throws: Refused.self) {
            try await database.write { db in
                try db.execute(sql: "INSERT INTO rows (id) VALUES (7)")
                throw Refused()
            }
        }
        #expect(try await Self.ids(database) == [])
        #expect(try await database.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM rows") } == 0)
    }

    @Test("when the commit fails, every write of the batch fails and none is kept")
    func commitFailure() async throws {
        let database = try Self.database()
        let (held, release) = try await Self.holdWriter(database)
        let good = Task {
            try await database.write { db in try db.execute(sql: "INSERT INTO rows (id) VALUES (1)") }
        }
        try await Self.waitUntilQueued(1, database)
        // A parent that does not exist: the deferred foreign key is checked at COMMIT.
        let orphan = Task {
            try await database.write { db in try db.execute(sql: "INSERT INTO rows (id, parent) VALUES (2, 99)") }
        }
        try await Self.waitUntilQueued(2, database)
        release.signal()
        try await held.value
        for task in [good, orphan] {
            await #expect {
                try await task.value
            } throws: { error in
                (error as? DatabaseError)?.resultCode == .SQLITE_CONSTRAINT
            }
        }
        #expect(try await Self.ids(database) == [])
        // The writer goes on.
        try await database.write { db in try db.execute(sql: "INSERT INTO rows (id) VALUES (3)") }
        #expect(try await Self.ids(database) == [3])
    }

    @Test("lookups see every write committed before them, share a reader's turn, and fail alone")
    func lookups() async throws {
        let database = try Self.database()
        // Each round writes, then looks up from many tasks at once: every lookup sees the write.
        for round in 1...20 {
            try await database.write { db in
                try db.execute(sql: "UPDATE counter SET value = ?", arguments: [round])
            }
            await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        try await database.lookup { db in
                            if index == 7 { throw Refused() }
                            return try Int.fetchOne(db, sql: "SELECT value FROM counter")!
                        }
                    }
                }
                var values: [Int] = []
                var refused = 0
                while let next = await group.nextResult() {
                    switch next {
                    case .success(let value): values.append(value)
                    case .failure(let error): refused += error is Refused ? 1 : 100
                    }
                }
                #expect(values == Array(repeating: round, count: 15), "round \(round)")
                #expect(refused == 1, "only the read that threw failed")
            }
        }
        #expect(database.lookups.batches < 20 * 16, "concurrent lookups shared turns")
    }
}
