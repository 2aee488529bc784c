import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetTokenServer
import Foundation
import Testing

@Suite("fleetauth users and keys rotate", .temporaryResources, .serialized)
struct TokenServerCLITests {
    /// A data directory as `fleetauth token-server` leaves it after its first start.
    static func dataDirectory() async throws -> String {
        try await CLI.provisionTokenServerData(at: CLI.temporaryDirectory())
    }

    @Test("users add, grant, list, revoke and remove work on the server's data directory")
    func users() async throws {
        let data = try await Self.dataDirectory()
        let added = try await CLI.run(
            ["users", "add", "dana", "--role", "driver", "--password-stdin", "--data", data, "--bcrypt-cost", "10"],
            stdin: "a long enough password\n"
        )
        #expect(added.status == 0, "\(added.stderr)")
        let generated = try await CLI.run([
            "users", "add", "carol", "--role", "consumer", "--data", data, "--bcrypt-cost", "10",
        ])
        #expect(generated.stdout.contains("Password: "))
        #expect(
            try await CLI.run(["users", "grant", "dana", "--vehicle", "v1", "--vehicle", "v2", "--data", data]).status
                == 0
        )
        let wrongKind = try await CLI.run(["users", "grant", "dana", "--trip", "t1", "--data", data])
        #expect(wrongKind.status != 0 && wrongKind.stderr.contains("cannot be granted a trip"))
        #expect(try await CLI.run(["users", "grant", "dana", "--vehicle", "*", "--data", data]).status != 0)
        #expect(try await CLI.run(["users", "revoke", "dana", "--vehicle", "v2", "--data", data]).status == 0)
        let list = try await CLI.run(["users", "list", "--data", data])
        #expect(list.stdout.contains("dana  driver  vehicle v1") && !list.stdout.contains("v2"))
        #expect(list.stdout.contains("carol  consumer"))

        let store = try SQLiteTokenServerStore(path: data + "/" + TokenServer.databaseFileName)
        let login = LoginService(users: store, sessions: store, hasher: PasswordHasher(cost: 4))
        #expect(
            try await login.login(username: "dana", password: "a long enough password", address: nil).user.role
                == .driver
        )
        #expect(try await CLI.run(["users", "remove", "dana", "--data", data]).status == 0)
        #expect(try await store.credentials(for: "dana") == nil)
        let missing = try await CLI.run(["users", "list", "--data", data + "/nowhere"])
        #expect(missing.status != 0 && missing.stderr.contains("fleetauth token-server"))
    }

    @Test("users add-service prints an API key once and stores only its hash; remove revokes it")
    func addService() async throws {
        let data = try await Self.dataDirectory()
        let added = try await CLI.run(["users", "add-service", "dispatch", "--data", data])
        #expect(added.status == 0, "\(added.stderr)")
        let key = try #require(
            added.stdout.split(separator: " ").last.map { String($0).trimmingCharacters(in: .newlines) }
        )
        #expect(key.hasPrefix(UserDirectory.serviceKeyPrefix))
        #expect(try await CLI.run(["users", "list", "--data", data]).stdout.contains("dispatch  service"))
        let store = try SQLiteTokenServerStore(path: data + "/" + TokenServer.databaseFileName)
        let found = try await store.sessionUser(
            tokenHash: LoginService.hash(sessionToken: key),
            at: Date(),
            holding: nil
        )
        #expect(found?.user == AppUser(username: "dispatch", role: .service))
        let asUser = try await CLI.run(
            ["users", "add", "svc", "--role", "service", "--data", data, "--password-stdin"],
            stdin: "long enough pw\n"
        )
        #expect(asUser.status != 0 && asUser.stderr.contains("add-service"))
        #expect(try await CLI.run(["users", "remove", "dispatch", "--data", data]).status == 0)
        #expect(
            try await store.sessionUser(tokenHash: LoginService.hash(sessionToken: key), at: Date(), holding: nil)
                == nil
        )
    }

    @Test("users add --subject and users link tie OpenID identities to users; list shows them; bad ones are refused")
    func identities() async throws {
        let data = try await Self.dataDirectory()
        let issuer = "https://op.example.com/realms/fleet"
        let added = try await CLI.run([
            "users", "add", "dana", "--role", "driver", "--subject", "sub-1", "--issuer", issuer, "--data", data,
        ])
        #expect(added.status == 0 && added.stdout.contains("sub-1 at \(issuer)"), "\(added.stderr)")
        #expect(!added.stdout.contains("Password"))
        _ = try await CLI.run(["users", "add", "ops", "--role", "operator", "--data", data, "--bcrypt-cost", "10"])
        #expect(try await CLI.run(["users", "link", "ops", "--subject", "sub-2", "--data", data]).status == 0)
        let list = try await CLI.run(["users", "list", "--data", data]).stdout
        #expect(
            list.contains("dana  driver  identity sub-1 at \(issuer)") && list.contains("ops  operator  identity sub-2")
        )
        let store = try SQLiteTokenServerStore(path: data + "/" + TokenServer.databaseFileName)
        #expect(
            try await store.linkedUser(issuer: issuer, subject: "sub-1", matchingUnqualified: false)
                == AppUser(username: "dana", role: .driver)
        )
        let refusals: [([String], String)] = [
            (["users", "add", "dave", "--role", "driver", "--subject", "sub-1", "--issuer", issuer], "already linked"),
            (
                ["users", "add", "erin", "--role", "driver", "--subject", "s", "--issuer", "http://op.example.com"],
                "https://"
            ),
            (["users", "add", "fred", "--role", "driver", "--issuer", issuer], "--subject"),
            (["users", "add", "gina", "--role", "driver", "--subject", "s", "--password-stdin"], "--password-stdin"),
            (["users", "link", "nobody", "--subject", "s-9"], "not found"),
            (["users", "link", "ops"], "--subject"),
        ]
        for (arguments, message) in refusals {
            let result = try await CLI.run(arguments + ["--data", data], stdin: "long enough pw\n")
            #expect(result.status != 0 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        // Nothing was written by a refused add.
        #expect(try await store.credentials(for: "dave") == nil)
    }

    @Test("token-server's OpenID options: pairs, https issuers (http on loopback), auto-create roles")
    func openIDOptions() async throws {
        let data = try CLI.temporaryDirectory()
        let rows: [([String], String)] = [
            (["--oidc-issuer", "https://op.example.com"], "--oidc-audience"),
            (["--oidc-issuer", "http://op.example.com", "--oidc-audience", "a"], "https://"),
            (["--oidc-issuer", "https://op.example.com?x=1", "--oidc-audience", "a"], "query"),
            (["--oidc-issuer", "https://op.example.com", "--oidc-audience", ""], "audience"),
            (
                ["--oidc-issuer", "https://op.example.com", "--oidc-audience", "a", "--oidc-auto-create", "operator"],
                "driver or consumer"
            ),
            (["--oidc-auto-create", "driver"], "--oidc-issuer"),
        ]
        for (arguments, message) in rows {
            let result = try await CLI.run(["token-server", "--data", data, "--port", "0"] + arguments, timeout: 30)
            #expect(result.status != 0 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    @Test("keys rotate adds a signing key per family and keeps the old one published")
    func rotate() async throws {
        let data = try await Self.dataDirectory()
        let store = try SQLiteTokenServerStore(path: data + "/" + TokenServer.databaseFileName)
        let before = try await store.signingKeys()
        let rotated = try await CLI.run(["keys", "rotate", "--family", "driver", "--data", data])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let after = try await store.signingKeys()
        #expect(after.count == before.count + 1)
        let drivers = after.filter { $0.family == .driver }
        #expect(drivers.count == 2 && drivers.filter { $0.retiredAt == nil }.count == 1)
        #expect(rotated.stdout.contains(drivers.first { $0.retiredAt == nil }!.kid))
        #expect(try await CLI.run(["keys", "rotate", "--family", "pilot", "--data", data]).status != 0)
    }
}

@Suite(
    "fleetauth on PostgreSQL: key-encryption keys, --database, external demo targets",
    .temporaryResources,
    .serialized
)
struct DatabaseCLITests {
    @Test("keys create-kek writes 32 random bytes in base64 with mode 0600, and never overwrites")
    func createKEK() async throws {
        let path = try CLI.temporaryDirectory() + "/kek"
        let created = try await CLI.run(["keys", "create-kek", "--out", path])
        #expect(created.status == 0, "\(created.stderr)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Data(base64Encoded: text.trimmingCharacters(in: .newlines))?.count == 32)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let again = try await CLI.run(["keys", "create-kek", "--out", path])
        #expect(again.status != 0 && again.stderr.contains("already exists"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }

    @Test("token-server --database needs a key-encryption key; a bad one is named before any connection")
    func keyEncryptionKeyOptions() async throws {
        let data = try CLI.temporaryDirectory()
        let url = "postgres://fleet:secret@127.0.0.1:1/fleet"
        let none = try await CLI.run(["token-server", "--data", data, "--database", url, "--port", "0"])
        #expect(none.status != 0 && none.stderr.contains("--key-encryption-key-file"), "\(none.stderr)")
        #expect(!none.stderr.contains("secret"))
        let missing = try await CLI.run([
            "token-server", "--data", data, "--database", url, "--key-encryption-key-file", data + "/nope",
        ])
        #expect(missing.status != 0 && missing.stderr.contains("Cannot read the key-encryption key file"))
        let short = try await CLI.run(
            ["token-server", "--data", data, "--database", url, "--port", "0"],
            environment: ["FLEETAUTH_KEY_ENCRYPTION_KEY": Data(count: 16).base64EncodedString()]
        )
        #expect(short.status != 0 && short.stderr.contains("16 bytes"), "\(short.stderr)")
        let refused = try await CLI.run(
            ["token-server", "--data", data, "--database", url, "--port", "0"],
            environment: ["FLEETAUTH_KEY_ENCRYPTION_KEY": KeyEncryptionKey.generate().base64]
        )
        #expect(refused.status != 0 && refused.stderr.contains("Cannot use PostgreSQL at 127.0.0.1:1/fleet as fleet"))
        #expect(!refused.stderr.contains("secret"))
    }

    @Test(
        "users, keys rotate and a wrong key-encryption key on a PostgreSQL token server's database",
        .enabled(if: PostgresTestServer.url != nil, "no PostgreSQL server: set FLEETAUTH_TEST_POSTGRES_URL")
    )
    func onPostgres() async throws {
        let url = try await PostgresTestServer.freshDatabase()
        let kek = KeyEncryptionKey.generate()
        let kekFile = try CLI.temporaryDirectory() + "/kek"
        try kek.write(to: kekFile)
        let store = try await PostgresTokenServerStore.connect(
            url,
            maximumConnections: 2,
            in: try TestResources.required().pools
        )
        _ = try await TokenServer(
            configuration: .init(dataDirectory: try CLI.temporaryDirectory(), keyEncryptionKey: kek, bcryptCost: 4),
            store: store
        )
        let database =
            "postgres://\(url.username):\(url.password ?? "")@\(url.host):\(url.port)/\(url.database)?sslmode=disable"
        let added = try await CLI.run(
            ["users", "add", "dana", "--role", "driver", "--password-stdin", "--database", database],
            stdin: "a long enough password\n"
        )
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try await CLI.run(["users", "grant", "dana", "--vehicle", "v1", "--database", database]).status == 0)
        #expect(
            try await CLI.run(["users", "list", "--database", database]).stdout.contains("dana  driver  vehicle v1")
        )
        #expect(try await store.credentials(for: "dana")?.user.role == .driver)

        let before = try await store.signingKeys()
        let rotated = try await CLI.run([
            "keys", "rotate", "--family", "consumer", "--database", database, "--key-encryption-key-file", kekFile,
        ])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(try await store.signingKeys().count == before.count + 1)
        let sealedOnly = try await store.signingKeys().allSatisfy { $0.material.path == nil }
        #expect(sealedOnly)
        let withoutKEK = try await CLI.run(["keys", "rotate", "--family", "consumer", "--database", database])
        #expect(withoutKEK.status != 0 && withoutKEK.stderr.contains("sealed in the database"))

        let wrong = try await CLI.run(
            ["token-server", "--data", try CLI.temporaryDirectory(), "--database", database, "--port", "0"],
            environment: ["FLEETAUTH_KEY_ENCRYPTION_KEY": KeyEncryptionKey.generate().base64]
        )
        #expect(wrong.status != 0 && wrong.stderr.contains("does not open signing key"), "\(wrong.stderr)")
        await store.database.close()
    }

    @Test("demo against external servers: both URLs or neither, and the operator's password is required")
    func externalDemoOptions() async throws {
        let one = try await CLI.run(["demo", "--token-server", "http://127.0.0.1:9"])
        #expect(one.status != 0 && one.stderr.contains("--token-server and --emulator go together"))
        let noPassword = try await CLI.run(
            ["demo", "--token-server", "http://127.0.0.1:9", "--emulator", "http://127.0.0.1:9"],
            environment: ["FLEETAUTH_OPERATOR_PASSWORD": ""]
        )
        #expect(noPassword.status != 0 && noPassword.stderr.contains("FLEETAUTH_OPERATOR_PASSWORD"))
        let unreachable = try await CLI.run(
            ["demo", "--token-server", "http://127.0.0.1:9", "--emulator", "http://127.0.0.1:9"],
            environment: ["FLEETAUTH_OPERATOR_PASSWORD": "x"]
        )
        #expect(unreachable.status != 0 && unreachable.stderr.contains("Cannot log in to http://127.0.0.1:9"))
    }
}
