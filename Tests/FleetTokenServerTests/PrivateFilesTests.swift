import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetEngineEmulator
import FleetTokenServer
import Foundation
import Testing

/// Password hashes, grants, the audit log, keys and the fleet are the servers' user's alone, whatever the umask.
@Suite("Data directories and databases are private", .temporaryResources)
struct PrivateFilesTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("a data directory is 0700; both servers' SQLite databases and their WAL files are 0600")
    func modes() async throws {
        let root = try TestResources.required().temporaryDirectory("private-files")
        let data = root + "/data"
        try PrivateFiles.directory(data)
        #expect(try Self.mode(data) == 0o700)

        let tokenServer = data + "/" + TokenServer.databaseFileName
        let store = try SQLiteTokenServerStore(path: tokenServer)
        try await store.addUser(AppUser(username: "u1", role: .driver), passwordHash: "x", createdAt: Date())
        let fleet = data + "/" + EmulatorServer.databaseFileName
        _ = try SQLiteFleetStore(path: fleet)
        for path in [tokenServer, tokenServer + "-wal", fleet] {
            #expect(try Self.mode(path) == 0o600, "\(path)")
        }

        // A database left readable by an older version is tightened when it is opened again.
        chmod(fleet, 0o644)
        _ = try SQLiteFleetStore(path: fleet)
        #expect(try Self.mode(fleet) == 0o600)
    }
}
