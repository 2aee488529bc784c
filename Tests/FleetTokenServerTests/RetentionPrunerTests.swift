import FleetAuthCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import Logging
import Testing

@Suite("Periodic work: audit retention", .temporaryResources)
struct RetentionPrunerTests {
    static func entry(_ issuedAt: Date, _ vehicle: String) -> AuditEntry {
        AuditEntry(
            issuedAt: issuedAt,
            username: "dana",
            endpoint: .driver,
            scope: #"{"vehicleid":"\#(vehicle)"}"#,
            kid: "k1",
            expiresAt: issuedAt + 3600
        )
    }

    static func scopes(_ fixture: TokenServerFixture) async throws -> [String] {
        try await fixture.store.recentEntries(limit: 10).map(\.scope)
    }

    @Test(
        "a step of the time of day past the retention deletes nothing at once: the cutoff moves as time passes",
        .timeLimit(.minutes(2))
    )
    func forwardStep() async throws {
        let fixture = try await TokenServerFixture()
        let now = Date(epochSeconds: fixture.clock.currentEpochSeconds)
        let old = Self.entry(now - 40 * 86_400, "old")
        let recent = Self.entry(now - 60, "recent")
        try await fixture.store.append(contentsOf: [old, recent])
        let records = LogRecorder()
        let pruner = fixture.server.retentionPruner(logger: .recording(to: records))
        let running = Task { try await pruner.run() }
        // The first round, at start, prunes what is past the 30 days.
        try await Waiting.until("the first round") {
            try await Self.scopes(fixture) == [recent.scope] && fixture.clock.sleeperCount == 1
        }
        // The clock is set 31 days ahead, then a round runs a minute later: the recent entry stays.
        fixture.clock.stepDate(by: 31 * 86_400)
        fixture.clock.advance(by: .seconds(60))
        try await Waiting.until("the second round") { fixture.clock.sleeperCount == 1 }
        #expect(try await Self.scopes(fixture) == [recent.scope])
        #expect(records.lines.contains { $0.contains("moved ahead of elapsed time") })
        // Once that much time has passed, it goes.
        fixture.clock.advance(by: .seconds(31 * 86_400))
        try await Waiting.until("the entry comes of age by elapsed time") {
            try await fixture.store.recentEntries(limit: 10).isEmpty
        }
        running.cancel()
        try? await running.value
    }
}
