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

/// SQLite goes on writing to a file that was deleted or replaced under it, and every such write is gone when the
/// process ends: the store must notice, refuse to acknowledge, report not ready and say so once. A database that
/// opens but cannot be written is not ready from the start.
@Suite("Emulator: a database file deleted, replaced or read-only", .temporaryResources)
struct LostDatabaseFileTests {
    typealias F = EmulatorFixture
    let base = "/v1/providers/demo-project/vehicles"

    static func remove(_ path: String) {
        for file in [path, path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: file) }
    }

    static func storeError(_ report: JSONObject) -> String {
        report["components"]?.objectValue?["store"]?.objectValue?["error"]?.stringValue ?? ""
    }

    @Test(
        "after rm of the database and its -wal/-shm: /readyz fails at once, every write answers 503 naming the deleted file, one log line",
        arguments: [false, true]
    )
    func deleted(replaced: Bool) async throws {
        let directory = try TestResources.required().temporaryDirectory()
        let path = directory + "/" + EmulatorServer.databaseFileName
        let store = try SQLiteFleetStore(path: path)
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
            #expect(try await ReadinessTests.get(client, "/readyz").0 == .ok)
            Self.remove(path)
            if replaced {
                // A restore that moves another database into place: a valid file, but not the one that was opened.
                let other = directory + "/other.sqlite"
                _ = try SQLiteFleetStore(path: other)
                try FileManager.default.moveItem(atPath: other, toPath: path)
            }
            let change = replaced ? "was replaced by another" : "was deleted"

            // Readiness finds out before any write meets it.
            let (notReady, report) = try await ReadinessTests.get(client, "/readyz")
            #expect(notReady == .serviceUnavailable)
            #expect(Self.storeError(report).contains(change), "\(report)")

            for index in 0..<3 {
                let (status, error) = try await client.call(
                    .post,
                    "\(base)?vehicleId=after\(index)",
                    token: F.server,
                    body: F.vehicleBody
                )
                #expect(status == .serviceUnavailable)
                let details = try #require(error["error"]?.objectValue)
                #expect(details["status"] == "UNAVAILABLE")
                let message = details["message"]?.stringValue ?? ""
                #expect(message.contains("the emulator's database cannot be written: its file"), "\(message)")
                #expect(message.contains(change) && message.contains("Restart the server"), "\(message)")
            }
            // Updates are writes too.
            let (updated, _) = try await client.call(
                .put,
                "\(base)/kept?updateMask=vehicleState",
                token: F.server,
                body: #"{"vehicleState":"ONLINE"}"#
            )
            #expect(updated == .serviceUnavailable)
            #expect(try await ReadinessTests.get(client, "/readyz").0 == .serviceUnavailable)
            #expect(recorder.lines.filter { $0.contains(change) }.count == 1, "\(recorder.lines)")
        }
        if replaced {
            // Nothing refused reached the file now at the path.
            let reopened = try SQLiteFleetStore(path: path)
            let count = try await reopened.database.writer.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM vehicles") ?? -1
            }
            #expect(count == 0)
        }
    }

    /// Runs `command` with `arguments`; whether it exited 0.
    static func run(_ command: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Whether `chattr +i` works here (root, on a file system with the immutable flag): the one way to make a file
    /// that root cannot write.
    static let immutableFiles: Bool = {
        let probe = NSTemporaryDirectory() + "/fleetauth-immutable-probe-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: probe, contents: Data()) else { return false }
        defer {
            _ = run("chattr", ["-i", probe])
            try? FileManager.default.removeItem(atPath: probe)
        }
        return run("chattr", ["+i", probe]) && !FileManager.default.isWritableFile(atPath: probe)
            || run("lsattr", [probe]) && (try? "x".write(toFile: probe, atomically: false, encoding: .utf8)) == nil
    }()

    @Test(
        "started on a database file that cannot be written (immutable): not ready before any write, writes 503 naming it, reads answer",
        .enabled(if: immutableFiles)
    )
    func immutableAtStart() async throws {
        let directory = try TestResources.required().temporaryDirectory()
        let path = directory + "/" + EmulatorServer.databaseFileName
        let first = try SQLiteFleetStore(path: path)
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: F.accounts),
            store: first
        )
        try await Application(router: router).test(.router) { client in
            let (created, _) = try await client.call(
                .post,
                "\(base)?vehicleId=v0",
                token: F.server,
                body: F.vehicleBody
            )
            #expect(created == .ok)
        }
        #expect(Self.run("chattr", ["+i", path]))
        defer { _ = Self.run("chattr", ["-i", path]) }
        // Started again on it: SQLite opens the file read-only, and only a write finds out.
        let store = try SQLiteFleetStore(path: path)
        let restarted = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: F.accounts),
            store: store
        )
        try await Application(router: restarted).test(.router) { client in
            let (notReady, report) = try await ReadinessTests.get(client, "/readyz")
            #expect(notReady == .serviceUnavailable)
            #expect(Self.storeError(report).contains("its file cannot be written (read-only)"), "\(report)")
            let (status, error) = try await client.call(
                .post,
                "\(base)?vehicleId=v1",
                token: F.server,
                body: F.vehicleBody
            )
            #expect(status == .serviceUnavailable)
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("read-only") == true, "\(error)")
            #expect(try await client.call(.get, "\(base)/v0", token: F.server).0 == .ok)
        }
    }
}
