import FleetAuthCore
import FleetTokenServer
import Foundation
import Testing

@Suite("fleetauth users and keys rotate", .serialized)
struct TokenServerCLITests {
    /// A data directory as `fleetauth token-server` leaves it after its first start.
    static func dataDirectory() async throws -> String {
        let directory = try CLI.temporaryDirectory()
        _ = try await TokenServer(
            configuration: .init(dataDirectory: directory, bcryptCost: 4),
            store: try SQLiteTokenServerStore(path: directory + "/" + TokenServer.databaseFileName))
        return directory
    }

    @Test("users add, grant, list, revoke and remove work on the server's data directory")
    func users() async throws {
        let data = try await Self.dataDirectory()
        let added = try CLI.run(
            ["users", "add", "dana", "--role", "driver", "--password-stdin", "--data", data, "--bcrypt-cost", "10"],
            stdin: "a long enough password\n")
        #expect(added.status == 0, "\(added.stderr)")
        let generated = try CLI.run([
            "users", "add", "carol", "--role", "consumer", "--data", data, "--bcrypt-cost", "10",
        ])
        #expect(generated.stdout.contains("Password: "))
        #expect(
            try CLI.run(["users", "grant", "dana", "--vehicle", "v1", "--vehicle", "v2", "--data", data]).status == 0)
        let wrongKind = try CLI.run(["users", "grant", "dana", "--trip", "t1", "--data", data])
        #expect(wrongKind.status != 0 && wrongKind.stderr.contains("cannot be granted a trip"))
        #expect(try CLI.run(["users", "grant", "dana", "--vehicle", "*", "--data", data]).status != 0)
        #expect(try CLI.run(["users", "revoke", "dana", "--vehicle", "v2", "--data", data]).status == 0)
        let list = try CLI.run(["users", "list", "--data", data])
        #expect(list.stdout.contains("dana  driver  vehicle v1") && !list.stdout.contains("v2"))
        #expect(list.stdout.contains("carol  consumer"))

        let store = try SQLiteTokenServerStore(path: data + "/" + TokenServer.databaseFileName)
        let login = LoginService(users: store, sessions: store, hasher: PasswordHasher(cost: 4))
        #expect(
            try await login.login(username: "dana", password: "a long enough password", address: nil).user.role
                == .driver)
        #expect(try CLI.run(["users", "remove", "dana", "--data", data]).status == 0)
        #expect(try await store.credentials(for: "dana") == nil)
        let missing = try CLI.run(["users", "list", "--data", data + "/nowhere"])
        #expect(missing.status != 0 && missing.stderr.contains("fleetauth token-server"))
    }

    @Test("keys rotate adds a signing key per family and keeps the old one published")
    func rotate() async throws {
        let data = try await Self.dataDirectory()
        let store = try SQLiteTokenServerStore(path: data + "/" + TokenServer.databaseFileName)
        let before = try await store.signingKeys()
        let rotated = try CLI.run(["keys", "rotate", "--family", "driver", "--data", data])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let after = try await store.signingKeys()
        #expect(after.count == before.count + 1)
        let drivers = after.filter { $0.family == .driver }
        #expect(drivers.count == 2 && drivers.filter { $0.retiredAt == nil }.count == 1)
        #expect(rotated.stdout.contains(drivers.first { $0.retiredAt == nil }!.kid))
        #expect(try CLI.run(["keys", "rotate", "--family", "pilot", "--data", data]).status != 0)
    }
}
