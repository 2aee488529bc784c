import FleetAuthCore
import FleetAuthServerSupport
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import Logging
import Testing

@Suite("Periodic work: the key pruner", .temporaryResources)
struct KeyPrunerTests {
    /// Yields until `clock` has `count` sleepers: the code under test has gone back to sleep.
    static func sleepers(_ clock: ManualClock, _ count: Int) async {
        while clock.sleeperCount != count { await Task.yield() }
    }

    @Test("a round runs each interval on the injected clock; a failed round is logged and the next one still runs")
    func periodicTask() async throws {
        struct Failure: Error {}
        let clock = ManualClock()
        let records = LogRecorder()
        let rounds = AsyncStream.makeStream(of: Int.self)
        let counter = LogRecorder()
        let task = PeriodicTask(
            name: "test work",
            interval: .seconds(60),
            clock: clock,
            logger: .recording(to: records)
        ) {
            counter.append("round")
            rounds.continuation.yield(counter.lines.count)
            if counter.lines.count == 1 { throw Failure() }
        }
        let running = Task { try await task.run() }
        var iterator = rounds.stream.makeAsyncIterator()
        await Self.sleepers(clock, 1)
        clock.advance(by: .seconds(59))
        #expect(counter.lines.isEmpty, "nothing runs before the interval")
        clock.advance(by: .seconds(1))
        #expect(await iterator.next() == 1)
        await Self.sleepers(clock, 1)
        #expect(records.lines.contains { $0.contains("periodic task failed") && $0.contains("test work") })
        clock.advance(by: .seconds(60))
        #expect(await iterator.next() == 2)
        running.cancel()
        try await running.value
    }

    @Test("the keyring's pruner removes a retired key once its tokens have expired, on the server's clock")
    func pruner() async throws {
        let fixture = try await TokenServerFixture()
        let keyring = fixture.server.keyring
        let old = try keyring.signingKey(for: .driver).record
        try await keyring.rotate(.driver)
        let running = Task { try await keyring.pruner(interval: .seconds(60)).run() }
        await Self.sleepers(fixture.clock, 1)
        fixture.clock.advance(by: .seconds(60))
        await Self.sleepers(fixture.clock, 1)
        #expect(try await fixture.store.signingKeys().contains { $0.kid == old.kid }, "its tokens may still be live")
        fixture.clock.advance(by: keyring.publicationWindow)
        await Self.sleepers(fixture.clock, 1)
        #expect(try await !fixture.store.signingKeys().contains { $0.kid == old.kid })
        #expect(!FileManager.default.fileExists(atPath: try #require(old.material.path)))
        running.cancel()
        try await running.value
    }
}
