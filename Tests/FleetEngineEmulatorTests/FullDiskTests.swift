import FleetAuthCore
import FleetAuthDatabase
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineEmulator
import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Testing

/// A full disk under SQLite, made real by SQLite itself: `PRAGMA max_page_count` caps the database at the pages it
/// has, so the next write that needs a page fails with SQLITE_FULL ("database or disk is full") exactly as on a full
/// file system; raising the cap is the room coming back.
@Suite("Emulator: a full disk under SQLite", .temporaryResources)
struct FullDiskTests {
    typealias F = EmulatorFixture
    let base = "/v1/providers/demo-project/vehicles"

    static func capPages(_ store: SQLiteFleetStore, extra: Int) async throws {
        try await store.database.writer.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            _ = try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages + extra)")
        }
    }

    @Test(
        "writes answer 503 UNAVAILABLE naming the full disk, /readyz fails the store, one log line per change; with room again /readyz and writes recover, nothing lost"
    )
    func fullDisk() async throws {
        let directory = try TestResources.required().temporaryDirectory()
        let store = try SQLiteFleetStore(path: directory + "/" + EmulatorServer.databaseFileName)
        let recorder = LogRecorder()
        store.database.health.logging(to: .recording(to: recorder))
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: F.accounts),
            store: store
        )
        try await Application(router: router).test(.router) { client in
            #expect(
                try await client.call(.post, "\(base)?vehicleId=kept", token: F.server, body: F.vehicleBody).0 == .ok
            )
            try await Self.capPages(store, extra: 0)
            // Each vehicle carries a few kilobytes of attributes: writes soon need a page the disk does not have.
            let attributes = (0..<40).map { #"{"key":"k\#($0)","value":"\#(String(repeating: "x", count: 100))"}"# }
            let body =
                #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"},"attributes":["#
                + attributes.joined(separator: ",") + "]}"
            var refused: (HTTPResponse.Status, JSONObject)?
            var created = 0
            for index in 0..<200 {
                let answer = try await client.call(.post, "\(base)?vehicleId=v\(index)", token: F.server, body: body)
                if answer.0 != .ok {
                    refused = answer
                    break
                }
                created += 1
            }
            let (status, error) = try #require(refused, "no write failed with the database capped at its pages")
            #expect(status == .serviceUnavailable)
            let details = try #require(error["error"]?.objectValue)
            #expect(details["status"] == "UNAVAILABLE")
            #expect(details["code"] == 503)
            let message = try #require(details["message"]?.stringValue)
            #expect(
                message.contains("the emulator's database cannot be written: the disk holding it is full"),
                "\(message)"
            )
            // More failed writes: still one line for the change of state.
            for index in 0..<3 {
                _ = try await client.call(.post, "\(base)?vehicleId=again\(index)", token: F.server, body: body)
            }
            let (notReady, report) = try await ReadinessTests.get(client, "/readyz")
            #expect(notReady == .serviceUnavailable)
            let storeState = try #require(report["components"]?.objectValue?["store"]?.objectValue)
            #expect(storeState["status"] == "failing")
            #expect(storeState["error"]?.stringValue?.contains("disk holding it is full") == true, "\(storeState)")
            // Reads go on.
            #expect(try await client.call(.get, "\(base)/kept", token: F.server).0 == .ok)
            #expect(recorder.lines.filter { $0.contains("cannot be written") }.count == 1, "\(recorder.lines)")

            // Asked again while still full, /readyz tries a write of its own, which fails too.
            #expect(try await ReadinessTests.get(client, "/readyz").0 == .serviceUnavailable)
            // Room again: /readyz finds out by itself (a balancer may have stopped sending writes), one line says so,
            // and writes succeed.
            try await Self.capPages(store, extra: 100_000)
            try await Waiting.until("/readyz answering 200 once the database has room again") {
                try await ReadinessTests.get(client, "/readyz").0 == .ok
            }
            #expect(try await client.call(.post, "\(base)?vehicleId=after", token: F.server, body: body).0 == .ok)
            #expect(recorder.lines.filter { $0.contains("can be written again") }.count == 1, "\(recorder.lines)")
            // Nothing acknowledged was lost; nothing refused was kept.
            let (listed, page) = try await client.call(.get, "\(base)?\(F.autos)&pageSize=500", token: F.server)
            #expect(listed == .ok)
            let names = Set(page["vehicles"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } ?? [])
            #expect(names.count == created + 2, "\(names.count) listed, \(created) created before the disk filled")
            #expect(!names.contains("providers/demo-project/vehicles/again0"))
        }
    }
}

@Suite("A database that cannot be written says why, and what a retry waits for")
struct WriteFailureWordsTests {
    @Test(
        "each storage failure is 503 with its own cause and remedy",
        arguments: [
            (ResultCode.SQLITE_FULL, "the disk holding it is full", "once there is room"),
            (.SQLITE_IOERR, "I/O error", "once the disk writes again"),
            (.SQLITE_READONLY, "read-only", "once the file can be written"),
            (.SQLITE_BUSY, "holds its write lock", "once the other connection lets go of it"),
        ]
    )
    func words(_ code: ResultCode, _ cause: String, _ remedy: String) throws {
        let health = SQLiteWriteHealth(label: "the emulator's database")
        let error = try #require(health.failed(DatabaseError(resultCode: code)) as? StoreError)
        #expect(error.code == .unavailable)
        #expect(error.message.contains(cause) && error.message.contains(remedy), "\(error.message)")
        #expect(health.problem?.contains(cause) == true)
        health.succeeded()
        #expect(health.problem == nil)
    }
}
