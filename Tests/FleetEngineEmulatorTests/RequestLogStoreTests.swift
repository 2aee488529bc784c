import FleetAuthServerTesting
import FleetAuthTesting
import Foundation
import Testing

@testable import FleetEngineEmulator

/// What every store must do for the request log (``RequestLogStore``), whatever keeps the data.
@Suite("RequestLogStore conformance", .temporaryResources)
struct RequestLogStoreTests {
    static func entry(_ provider: String, _ timestamp: Int64, _ name: String) -> StoredLogEntry {
        StoredLogEntry(provider: provider, timestamp: timestamp, body: Array(name.utf8) + [0, 255])
    }

    static func names(_ rows: [(position: LogPosition, body: [UInt8])]) -> [String] {
        rows.map { String(decoding: $0.body.dropLast(2), as: UTF8.self) }
    }

    @Test(
        "entries are read by provider in time order, then write order, both ways, from a position",
        arguments: FleetStoreDriver.all
    )
    func order(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.appendLogEntries([
            Self.entry("p", 20, "b"), Self.entry("q", 15, "other"), Self.entry("p", 10, "a"), Self.entry("p", 20, "c"),
        ])
        try await store.appendLogEntries([Self.entry("p", 30, "d")])
        let ascending = try await store.logEntries(
            providers: ["p"],
            descending: false,
            after: nil,
            notBefore: 0,
            limit: 10
        )
        #expect(Self.names(ascending) == ["a", "b", "c", "d"])
        let next = try await store.logEntries(
            providers: ["p"],
            descending: false,
            after: ascending[1].position,
            notBefore: 0,
            limit: 2
        )
        #expect(Self.names(next) == ["c", "d"])
        let descending = try await store.logEntries(
            providers: ["p", "q"],
            descending: true,
            after: nil,
            notBefore: 0,
            limit: 10
        )
        #expect(Self.names(descending) == ["d", "c", "b", "other", "a"])
        let older = try await store.logEntries(
            providers: ["p"],
            descending: true,
            after: descending[1].position,
            notBefore: 15,
            limit: 10
        )
        #expect(Self.names(older) == ["b"])
        #expect(LogPosition(token: descending[1].position.token) == descending[1].position)
    }

    @Test("retention deletes entries by age and keeps the latest by count", arguments: FleetStoreDriver.all)
    func trim(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.appendLogEntries((1...6).map { Self.entry("p", Int64($0), "e\($0)") })
        try await store.trimLog(keepingLatest: 4, before: 0)
        #expect(
            Self.names(
                try await store.logEntries(providers: ["p"], descending: false, after: nil, notBefore: 0, limit: 10)
            )
                == ["e3", "e4", "e5", "e6"]
        )
        try await store.trimLog(keepingLatest: 100, before: 5)
        #expect(
            Self.names(
                try await store.logEntries(providers: ["p"], descending: false, after: nil, notBefore: 0, limit: 10)
            )
                == ["e5", "e6"]
        )
        // Numbers are never given again after the latest were deleted.
        let last = try #require(
            try await store.logEntries(providers: ["p"], descending: true, after: nil, notBefore: 0, limit: 1).first
        )
        try await store.trimLog(keepingLatest: 0, before: 0)
        try await store.appendLogEntries([Self.entry("p", 6, "e7")])
        let again = try await store.logEntries(providers: ["p"], descending: false, after: nil, notBefore: 0, limit: 10)
        #expect(Self.names(again) == ["e7"] && again[0].position.id > last.position.id)
    }

    @Test(
        "entries written by two instances on one database are all read, each once",
        arguments: FleetStoreDriver.persistent
    )
    func sharedDatabase(_ driver: FleetStoreDriver) async throws {
        let (first, reopen) = try await driver.open()
        let second = try #require(try await reopen?())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in [first, second].enumerated() {
                group.addTask {
                    for batch in 0..<10 {
                        try await store.appendLogEntries(
                            (0..<10).map { Self.entry("p", Int64(batch), "i\(index)-\(batch)-\($0)") }
                        )
                    }
                }
            }
            try await group.waitForAll()
        }
        var seen: [String] = []
        var position: LogPosition?
        while true {
            let page = try await first.logEntries(
                providers: ["p"],
                descending: false,
                after: position,
                notBefore: 0,
                limit: 7
            )
            guard let last = page.last else { break }
            seen += Self.names(page)
            position = last.position
        }
        #expect(seen.count == 200 && Set(seen).count == 200)
    }
}
