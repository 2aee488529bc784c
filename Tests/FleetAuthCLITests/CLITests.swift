import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetEngineEmulator
import FleetTokenServer
import Foundation
import Testing

/// Runs the built `fleetauth` executable (built alongside the tests, in the same products directory).
struct CLI {
    static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["FLEETAUTH_BIN"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "fleetauth"
        )
    }()

    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs the binary to its end on a thread of its own, so the wait for the process does not hold one of the few
    /// threads every concurrent test shares (two on a two-core machine: the in-process servers of other tests would
    /// stall); with `timeout`, a run still going after that many seconds is terminated (and its status is then the
    /// signal's, so the test fails instead of hanging).
    static func run(
        _ arguments: [String],
        stdin: String? = nil,
        in directory: String? = nil,
        environment: [String: String] = [:],
        timeout: TimeInterval? = nil,
        program: URL = executable
    ) async throws -> Output {
        try await detached {
            try runBlocking(
                arguments,
                stdin: stdin,
                in: directory,
                environment: environment,
                timeout: timeout,
                program: program
            )
        }
    }

    /// ``run(_:stdin:in:environment:timeout:program:)`` on the calling thread; `program` is `fleetauth` unless named.
    static func runBlocking(
        _ arguments: [String],
        stdin: String? = nil,
        in directory: String? = nil,
        environment: [String: String] = [:],
        timeout: TimeInterval? = nil,
        program: URL = executable
    ) throws -> Output {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = Self.environment(environment)
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                if process.isRunning { process.terminate() }
            }
        }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self)
        )
    }

    /// The environment a test's `fleetauth` process runs with: this process's, without Application Default
    /// Credentials (a test never reaches Google), with `extra` on top. A token server hashes passwords at the lowest
    /// cost it allows (`FLEETAUTH_BCRYPT_COST`, 10 instead of 12: a quarter of the work) unless `extra` says
    /// otherwise: no test here is about the cost, and each start hashes the dummy password.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["GOOGLE_APPLICATION_CREDENTIALS"] = nil
        environment["FLEETAUTH_BCRYPT_COST"] = "10"
        environment.merge(extra) { $1 }
        return environment
    }

    /// Runs blocking work (waiting for a process) on a new thread.
    static func detached<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    static func temporaryDirectory() throws -> String {
        let path = try TestResources.required().temporaryDirectory("fleetauth-cli")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A temporary directory whose `fleet-engine-data/keys` (the emulator's default data directory, relative to
    /// the process's working directory) already holds a key per role in `demo-project`, from ``TestKeys``: an
    /// emulator started there reuses them, as on a restart, instead of making eleven RSA keys. For tests whose
    /// subject is not the first start's provisioning.
    static func provisionedDirectory() async throws -> String {
        let path = try temporaryDirectory()
        let keys = path + "/fleet-engine-data/keys"
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        for role in FleetEngineRole.all {
            let name = DefaultProvisioning.accountName(for: role)
            try await TestKeys.key(projectID: "demo-project", name: name).write(to: "\(keys)/\(name).json")
        }
        return path
    }

    /// Makes `path` a token server data directory as `fleetauth token-server` (or `serve`) leaves it after its first
    /// start: its database, with a signing key per family from ``TestKeys`` and the operator account. A server
    /// started on it reuses them, as on a restart, instead of making six RSA keys. For tests whose subject is not
    /// the first start.
    @discardableResult
    static func provisionTokenServerData(at path: String) async throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        _ = try await TokenServer(
            configuration: .init(dataDirectory: path, bcryptCost: 4),
            store: try SQLiteTokenServerStore(path: path + "/" + TokenServer.databaseFileName),
            keyGenerator: TestKeys.generator
        )
        return path
    }
}

@Suite("fleetauth CLI", .temporaryResources, .serialized)
struct CLITests {
    let directory: String
    let keyPath: String
    let email = "fleet-driver@demo-project.iam.gserviceaccount.com"

    /// A directory holding the key file `keys create` writes (from ``TestKeys``: `keysCreate` runs the command).
    init() async throws {
        directory = try CLI.temporaryDirectory()
        keyPath = directory + "/fleet-driver.json"
        try await TestKeys.key(projectID: "demo-project", name: "fleet-driver").write(to: keyPath)
    }

    @Test("keys create writes a 0600 service-account key file and refuses to overwrite it")
    func keysCreate() async throws {
        let directory = try CLI.temporaryDirectory()
        let keyPath = directory + "/fleet-driver.json"
        let created = try await CLI.run(
            ["keys", "create", "--project", "demo-project", "--name", "fleet-driver"],
            in: directory
        )
        #expect(created.status == 0, "\(created.stderr)")
        let key = try ServiceAccountKey(contentsOf: keyPath)
        #expect(key.clientEmail == email)
        #expect(key.projectID == "demo-project")
        let mode = try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let again = try await CLI.run(
            ["keys", "create", "--project", "demo-project", "--name", "fleet-driver"],
            in: directory
        )
        #expect(again.status == 1)
        #expect(again.stderr.contains("fleet-driver.json: the file exists already"))
        let out = try await CLI.run([
            "keys", "create", "--project", "demo-project", "--name", "other", "--out", directory + "/custom.json",
        ])
        #expect(out.status == 0)
        #expect(FileManager.default.fileExists(atPath: directory + "/custom.json"))
    }

    @Test("keys jwks prints the JWK set of the key files")
    func keysJWKS() async throws {
        let out = try await CLI.run(["keys", "jwks", keyPath])
        #expect(out.status == 0)
        let keys = try JSONWebKeySet(json: Array(out.stdout.utf8)).verificationKeys()
        let key = try ServiceAccountKey(contentsOf: keyPath)
        #expect(keys.map(\.keyID) == [key.privateKeyID])
        #expect(keys.first?.jwk == key.verificationKey.jwk)
    }

    static let mintCases: [([String], JSONValue)] = [
        (["--type", "server"], ["tripid": "*", "vehicleid": "*"]),
        (["--type", "driver", "--vehicle", "v1"], ["vehicleid": "v1"]),
        (["--type", "consumer", "--trip", "t1"], ["tripid": "t1"]),
        (["--type", "delivery_server"], ["deliveryvehicleid": "*", "taskid": "*", "trackingid": "*"]),
        (["--type", "delivery_consumer", "--tracking", "x1"], ["trackingid": "x1"]),
        (["--type", "delivery_consumer", "--task", "k1"], ["taskid": "k1"]),
        (["--type", "untrusted_delivery_driver", "--delivery-vehicle", "d1"], ["deliveryvehicleid": "d1"]),
        (
            ["--type", "trusted_delivery_driver", "--delivery-vehicle", "d1", "--task", "k1"],
            ["deliveryvehicleid": "d1", "taskid": "k1"]
        ),
        (["--type", "delivery_fleet_reader"], ["deliveryvehicleid": "*", "taskid": "*", "trackingid": "*"]),
        (
            ["--type", "fleet_reader"],
            ["tripid": "*", "vehicleid": "*", "deliveryvehicleid": "*", "taskid": "*", "trackingid": "*"]
        ),
        (["--type", "custom", "--task-ids", "a,b"], ["taskids": ["a", "b"]]),
    ]

    @Test("token mint → token verify for every type", arguments: mintCases)
    func mintVerify(_ arguments: [String], _ authorization: JSONValue) async throws {
        let mint = try await CLI.run(["token", "mint", "--key", keyPath] + arguments)
        #expect(mint.status == 0, "\(mint.stderr)")
        let jwt = mint.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let verify = try await CLI.run(["token", "verify", "--key", keyPath, jwt])
        #expect(verify.status == 0)
        #expect(verify.stdout.hasPrefix("VALID {"))
        let claims = try StrictJSONParser().parseObject(
            String(verify.stdout.dropFirst(6)).trimmingCharacters(in: .whitespacesAndNewlines)
        )
        #expect(claims["authorization"] == authorization)
        #expect(claims["iss"] == .string(email) && claims["sub"] == .string(email))
        #expect(claims["aud"] == "https://fleetengine.googleapis.com/")
        let iat = try #require(claims["iat"]?.integerValue), exp = try #require(claims["exp"]?.integerValue)
        #expect(exp - iat == 3600)
    }

    @Test("token mint --json prints the token endpoint's JSON with epoch milliseconds")
    func mintJSON() async throws {
        let out = try await CLI.run([
            "token", "mint", "--key", keyPath, "--type", "driver", "--vehicle", "v1", "--json", "--now", "1800000000",
            "--lifetime", "1800",
        ])
        #expect(out.status == 0)
        let object = try StrictJSONParser().parseObject(out.stdout)
        #expect(object.keys == ["jwt", "token", "creationTimestamp", "expirationTimestamp", "expiresInSeconds"])
        #expect(object["jwt"] == object["token"])
        #expect(object["creationTimestamp"] == .integer(1_800_000_000_000))
        #expect(object["expirationTimestamp"] == .integer(1_800_001_800_000))
        #expect(object["expiresInSeconds"] == 1800)
    }

    @Test("token mint refuses missing, stray and invalid IDs with a precise message")
    func mintErrors() async throws {
        let missing = try await CLI.run(["token", "mint", "--key", keyPath, "--type", "driver"])
        #expect(missing.status != 0 && missing.stderr.contains("--type driver needs --vehicle"))
        let stray = try await CLI.run([
            "token", "mint", "--key", keyPath, "--type", "consumer", "--trip", "t", "--vehicle", "v",
        ])
        #expect(stray.status != 0 && stray.stderr.contains("--vehicle does not apply to --type consumer"))
        let invalid = try await CLI.run(["token", "mint", "--key", keyPath, "--type", "driver", "--vehicle", "a/b"])
        #expect(invalid.status != 0 && invalid.stderr.contains("must not contain '/'"))
        let spelled = try await CLI.run([
            "token", "mint", "--key", keyPath, "--type", "TRUSTED_DELIVERY_DRIVER", "--delivery-vehicle-id", "d1",
        ])
        #expect(spelled.status == 0, "\(spelled.stderr)")
        let camel = try await CLI.run(["token", "mint", "--key", keyPath, "--type", "deliveryServer"])
        #expect(camel.status == 0, "\(camel.stderr)")
        let unknown = try await CLI.run(["token", "mint", "--key", keyPath, "--type", "pilot"])
        #expect(unknown.status != 0 && unknown.stderr.contains("Unknown token type"))
        let lifetime = try await CLI.run(["token", "mint", "--key", keyPath, "--type", "server", "--lifetime", "7200"])
        #expect(lifetime.status == 1 && lifetime.stderr.contains("1 to 3600"))
        let noKey = try await CLI.run(["token", "mint", "--key", directory + "/missing.json", "--type", "server"])
        #expect(noKey.status == 1 && noKey.stderr.contains("missing.json: no such key file"))
        let noADC = try await CLI.run(["token", "mint", "--type", "server"], environment: ["HOME": directory])
        #expect(noADC.status == 1 && noADC.stderr.contains("GOOGLE_APPLICATION_CREDENTIALS"))
        let adc = try await CLI.run(
            ["token", "mint", "--type", "server"],
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": keyPath]
        )
        #expect(adc.status == 0 && adc.stdout.hasPrefix("eyJ"))
    }

    @Test(
        "a server command's options come from FLEETAUTH_ variables, validated as options; the command line wins",
        arguments: ["emulator", "token-server", "serve"]
    )
    func environmentVariables(_ command: String) async throws {
        // An option of a shared group (LoggingOptions): the names come from the command's own declaration.
        let fromVariable = try await CLI.run([command], environment: ["FLEETAUTH_LOG_FORMAT": "xml"])
        #expect(fromVariable.status != 0 && fromVariable.stderr.contains("'xml' is invalid for '--log-format"))
        let optionWins = try await CLI.run(
            [command, "--log-format=yaml"],
            environment: ["FLEETAUTH_LOG_FORMAT": "xml"]
        )
        #expect(optionWins.status != 0 && optionWins.stderr.contains("'yaml'") && !optionWins.stderr.contains("xml"))
        // A flag's variable is a boolean (the token server has no flags).
        guard let flag = ["emulator": "IN_MEMORY", "serve": "KEYLESS"][command] else { return }
        let notABoolean = try await CLI.run([command], environment: ["FLEETAUTH_\(flag)": "maybe"])
        #expect(notABoolean.status == 1 && notABoolean.stderr.contains("FLEETAUTH_\(flag) must be 1, true, 0 or false"))
    }

    @Test("a repeatable option's variable is a comma-separated list, each item validated")
    func environmentList() async throws {
        let proxies = try await CLI.run(
            ["token-server"],
            environment: ["FLEETAUTH_TRUSTED_PROXY": "10.0.0.1, nonsense"]
        )
        #expect(proxies.status != 0 && proxies.stderr.contains("--trusted-proxy: nonsense is not an IP address"))
    }

    @Test("a file that is not a key is named in the error, with no key material")
    func notAKey() async throws {
        let path = directory + "/user.json"
        #expect(
            FileManager.default.createFile(
                atPath: path,
                contents: Data(#"{"type":"authorized_user","refresh_token":"secret-refresh"}"#.utf8)
            )
        )
        let out = try await CLI.run(["token", "mint", "--key", path, "--type", "server"])
        #expect(out.status == 1)
        #expect(out.stderr.contains("user.json: not a service-account key file"))
        #expect(!out.stderr.contains("secret-refresh"))
    }

    @Test("token inspect shows header, claims and time to expiry without verifying")
    func inspect() async throws {
        let jwt = try await CLI.run([
            "token", "mint", "--key", keyPath, "--type", "driver", "--vehicle", "v9", "--now", "1800000000",
        ]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let out = try await CLI.run(["token", "inspect", "--now", "1800000600", jwt])
        #expect(out.status == 0)
        #expect(out.stdout.contains(#""alg": "RS256""#))
        #expect(out.stdout.contains(#""vehicleid": "v9""#))
        #expect(out.stdout.contains("expires in 50 min 0 s"))
        #expect(out.stdout.contains("NOT verified"))
        let json = try await CLI.run(["token", "inspect", "--json", "--now", "1800003700"], stdin: jwt + "\n")
        let object = try StrictJSONParser().parseObject(json.stdout)
        #expect(object["expiresInSeconds"] == -100)
        #expect(object["verified"] == false)
        let bad = try await CLI.run(["token", "inspect", "not-a-token"])
        #expect(bad.status == 1 && bad.stderr.contains("not a compact JWS"))
    }

    @Test("token verify prints INVALID <reason> with exit status 0, and --batch gives one verdict per line")
    func verify() async throws {
        let mint = { (now: String) in
            try await CLI.run([
                "token", "mint", "--key", self.keyPath, "--type", "driver", "--vehicle", "v1", "--now", now,
            ])
            .stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let token = try await mint("1800000000")
        let expired = try await CLI.run(["token", "verify", "--key", keyPath, "--now", "1800003600", token])
        #expect(expired.status == 0 && expired.stdout == "INVALID expired\n")
        let valid = try await CLI.run(["token", "verify", "--key", keyPath, "--now", "1800003599", token])
        #expect(valid.stdout.hasPrefix("VALID "))
        let audience = try await CLI.run([
            "token", "verify", "--key", keyPath, "--now", "1800000000", "--audience", "https://other/", token,
        ])
        #expect(audience.stdout == "INVALID invalid_audience\n")

        let tampered = String(token.dropLast(2)) + (token.hasSuffix("AA") ? "BA" : "AA")
        let batchInput = [token, "garbage", "", tampered, try await mint("1800000300")].joined(separator: "\n") + "\n"
        let batch = try await CLI.run(
            ["token", "verify", "--key", keyPath, "--now", "1800000400", "--batch"],
            stdin: batchInput
        )
        #expect(batch.status == 0)
        let verdicts = batch.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
            $0.split(separator: " ").first.map(String.init) == "VALID" ? "VALID" : String($0)
        }
        #expect(
            verdicts == [
                "VALID", "INVALID malformed_token", "INVALID malformed_token", "INVALID invalid_signature", "VALID",
            ]
        )
    }

    @Test("token verify --jwks trusts a JWK set, bound to --issuer when given")
    func verifyJWKS() async throws {
        let jwks = directory + "/keys.json"
        let set = try await CLI.run(["keys", "jwks", keyPath]).stdout
        #expect(FileManager.default.createFile(atPath: jwks, contents: Data(set.utf8)))
        let token = try await CLI.run(["token", "mint", "--key", keyPath, "--type", "server"]).stdout
            .trimmingCharacters(
                in: .whitespacesAndNewlines
            )
        #expect(try await CLI.run(["token", "verify", "--jwks", jwks, token]).stdout.hasPrefix("VALID "))
        #expect(
            try await CLI.run(["token", "verify", "--jwks", jwks, "--issuer", email, token]).stdout.hasPrefix("VALID ")
        )
        #expect(
            try await CLI.run(["token", "verify", "--jwks", jwks, "--issuer", "x@y.iam.gserviceaccount.com", token])
                .stdout
                == "INVALID unknown_issuer\n"
        )
        let noTrust = try await CLI.run(["token", "verify", token])
        #expect(noTrust.status != 0 && noTrust.stderr.contains("--key or a --jwks"))
        let badSet = directory + "/bad.json"
        #expect(
            FileManager.default.createFile(
                atPath: badSet,
                contents: Data(#"{"keys":[{"kty":"RSA","use":"enc","n":"AQAB","e":"AQAB"}]}"#.utf8)
            )
        )
        let refused = try await CLI.run(["token", "verify", "--jwks", badSet, token])
        #expect(refused.status == 1 && refused.stderr.contains("bad.json"))
    }
}
