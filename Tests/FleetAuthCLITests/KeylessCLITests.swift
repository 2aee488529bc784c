import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerTesting
import Foundation
import Testing

/// A `fleetauth` server process, read until it says where it listens.
final class ListeningProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let errors = Pipe()
    private let output = Pipe()

    init(_ arguments: [String], directory: String, environment: [String: String], marker: String) throws {
        process.executableURL = CLI.executable
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = CLI.environment(environment)
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        port = try Self.port(of: process, output: output, marker: marker)
    }

    /// Reads `output` until a line carries `marker` followed by a port number, whenever it comes; the process is ended
    /// and an error thrown when its output ends first (or, as a guard against a hang only, after
    /// ``Waiting/hangLimit``).
    static func port(of process: Process, output: Pipe, marker: String) throws -> Int {
        try ports(of: process, output: output, markers: [marker])[0]
    }

    /// Reads `output` until a line carries each of `markers` followed by a port number; their ports, in order.
    static func ports(of process: Process, output: Pipe, markers: [String]) throws -> [Int] {
        var text = ""
        let deadline = ContinuousClock.now + Waiting.hangLimit
        func found(_ marker: String) -> Int? {
            guard let range = text.range(of: marker),
                let end = text[range.upperBound...].firstIndex(where: { !$0.isNumber })
            else { return nil }
            return Int(text[range.upperBound..<end])
        }
        while ContinuousClock.now < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            let ports = markers.compactMap(found)
            if ports.count == markers.count { return ports }
        }
        process.terminate()
        throw CLIError("\(process.arguments?.first ?? "") did not start: \(text)")
    }

    func stop() -> String {
        process.terminate()
        process.waitUntilExit()
        return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}

@Suite("fleetauth: keyless signing (IAM through the emulator, PKCS#11 on SoftHSM2)", .temporaryResources, .serialized)
struct KeylessCLITests {
    @Test("token mint --signer iam signs through the emulator's IAM, authenticated by its metadata server")
    func mintThroughIAM() async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The account the stand-ins may sign as, and a Fleet Engine role account they hold but must not sign as.
        let key = try TestKeys.keyNow(projectID: "demo-project", name: "fleetauth-driver")
        let role = try TestKeys.keyNow(projectID: "demo-project", name: "fleet-role")
        try key.write(to: directory + "/driver.json")
        try role.write(to: directory + "/role.json")
        try TrustConfiguration(serviceAccounts: [
            .init(
                account: TrustedServiceAccount(
                    email: key.clientEmail,
                    project: "demo-project",
                    roles: [.driverSdkUser]
                ),
                keySource: .keyFile("driver.json")
            ),
            .init(
                account: TrustedServiceAccount(
                    email: role.clientEmail,
                    project: "demo-project",
                    roles: [.serviceSuperUser]
                ),
                keySource: .keyFile("role.json")
            ),
        ]).write(to: directory + "/trust.json")
        let emulator = try await CLI.detached {
            try EmulatorProcess(
                arguments: ["--trust", "trust.json", "--iam-port", "0", "--iam-sign-as", key.clientEmail],
                directory: directory
            )
        }
        defer { emulator.process.terminate() }
        let email = key.clientEmail
        let iamPort = try #require(emulator.iamPort)
        let base = "http://127.0.0.1:\(iamPort)"
        let minted = try await CLI.run(
            [
                "token", "mint", "--signer", "iam", "--service-account", email, "--iam-credentials-url", base,
                "--google-keys-url", base, "--type", "driver", "--vehicle", "v1",
            ],
            environment: ["GCE_METADATA_HOST": "127.0.0.1:\(iamPort)"],
            timeout: 30
        )
        #expect(minted.status == 0, "\(minted.stderr)")
        let jwt = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let (status, _) = try await emulator.request("GET", "/v1/providers/demo-project/vehicles/v1", token: jwt)
        #expect(status == 404)  // authenticated and authorized: the vehicle does not exist
        let refused = try await CLI.run(
            [
                "token", "mint", "--signer", "iam", "--service-account", "nobody@demo-project.iam.gserviceaccount.com",
                "--iam-credentials-url", base, "--google-keys-url", base, "--type", "server",
            ],
            environment: ["GCE_METADATA_HOST": "127.0.0.1:\(iamPort)"],
            timeout: 30
        )
        #expect(refused.status == 1)
        // An account that does not exist: IAM's same 403, so the answer tells nobody which accounts exist.
        #expect(refused.stderr.contains("needs the permission iam.serviceAccounts.signJwt"), "\(refused.stderr)")
        // A held account the runtime identity is not granted: IAM's 403, named as a missing permission.
        let denied = try await CLI.run(
            [
                "token", "mint", "--signer", "iam", "--service-account", role.clientEmail,
                "--iam-credentials-url", base, "--google-keys-url", base, "--type", "server",
            ],
            environment: ["GCE_METADATA_HOST": "127.0.0.1:\(iamPort)"],
            timeout: 30
        )
        #expect(denied.status == 1)
        #expect(denied.stderr.contains("iam.serviceAccounts.signJwt"), "\(denied.stderr)")
    }

    @Test(
        "token-server with an IAM family: the trust file names the Google key set URL; IAM down at start is a warning"
    )
    func tokenServerIAM() async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let email = "fleet-driver@demo-project.iam.gserviceaccount.com"
        let server = try await CLI.detached {
            try ListeningProcess(
                [
                    "token-server", "--port", "0", "--signer", "driver=iam", "--service-account", "driver=\(email)",
                    "--iam-credentials-url", "http://127.0.0.1:1", "--google-keys-url", "http://127.0.0.1:1/google",
                ],
                directory: directory,
                environment: ["GCE_METADATA_HOST": "127.0.0.1:1"],
                marker: "Token server listening on http://127.0.0.1:"
            )
        }
        let trust = try TrustConfiguration(contentsOf: directory + "/fleetauth-data/emulator-trust.json")
        let stderr = try await CLI.detached { server.stop() }
        #expect(stderr.contains("Warning: no access token"), "\(stderr)")
        let entry = try #require(trust.serviceAccounts.first { $0.account.email == email })
        #expect(entry.keySource == .jwksURL("http://127.0.0.1:1/google/service_accounts/v1/metadata/jwk/\(email)"))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory + "/fleetauth-data/keys")
        #expect(!files.contains { $0.hasPrefix("driver-") })
        #expect(files.contains { $0.hasPrefix("consumer-") })
        let rotate = try await CLI.run(["keys", "rotate", "--family", "driver"], in: directory, timeout: 30)
        #expect(rotate.status == 1)
        #expect(rotate.stderr.contains("FleetAuth holds no key"), "\(rotate.stderr)")
    }

    @Test(
        "bad keyless configuration stops the token server at start with one line and exit 1",
        arguments: [
            (
                ["--signer", "pilot=iam", "--service-account", "pilot=a@b.iam.gserviceaccount.com"],
                "families are driver"
            ),
            (["--signer", "driver=iam"], "needs --service-account driver=EMAIL"),
            (["--signer", "driver=kms", "--service-account", "driver=a@b"], "driver=iam or driver=pkcs11:URI"),
            (["--signer", "driver=pkcs11:token=t", "--service-account", "driver=a@b"], "module-path"),
            (
                [
                    "--signer", "driver=pkcs11:token=t;object=k?module-path=/nonexistent/lib.so", "--service-account",
                    "driver=a@b",
                ],
                "does not exist"
            ),
            (["--service-account", "driver=a@b"], "has no --signer driver"),
            (["--key-id", "driver=k", "--signer", "driver=iam", "--service-account", "driver=a@b"], "--key-id"),
        ]
    )
    func badConfiguration(_ arguments: [String], _ problem: String) async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await CLI.run(["token-server", "--port", "0"] + arguments, in: directory, timeout: 30)
        #expect(result.status != 0)
        #expect(result.stderr.contains(problem), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/fleetauth-data/token-server.sqlite"))
    }

    @Test(
        "PKCS#11: keys create, keys certificate, token mint; a wrong PIN, a missing object or a non-RSA-2048 key stop the server",
        .enabled(
            if: SoftHSM.isAvailable || SoftHSM.isRequired,
            "SoftHSM2 is not installed (apt-get install softhsm2 opensc)"
        )
    )
    func pkcs11() async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A token of this test's own: the fleetauth processes open it, never this process.
        let token = try await CLI.detached { try SoftHSM.makeToken(label: "cli") }
        let uri = token.uri(object: "driver")
        let email = "hsm-driver@demo-project.iam.gserviceaccount.com"
        let created = try await CLI.run(
            ["keys", "create", "--pkcs11", uri],
            environment: token.environment,
            timeout: 30
        )
        #expect(created.status == 0, "\(created.stderr)")
        #expect(!created.stdout.contains(token.pin))
        let again = try await CLI.run(
            ["keys", "create", "--pkcs11", uri],
            environment: token.environment,
            timeout: 30
        )
        #expect(again.status == 1 && again.stderr.contains("already exists"))
        let certificate = directory + "/cert.pem"
        let written = try await CLI.run(
            ["keys", "certificate", "--pkcs11", uri, "--service-account", email, "--out", certificate],
            environment: token.environment,
            timeout: 30
        )
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try String(contentsOfFile: certificate, encoding: .utf8).hasPrefix("-----BEGIN CERTIFICATE-----"))
        let minted = try await CLI.run(
            [
                "token", "mint", "--signer", uri, "--service-account", email, "--key-id", "uploaded-1", "--type",
                "server",
            ],
            environment: token.environment,
            timeout: 30
        )
        #expect(minted.status == 0, "\(minted.stderr)")
        // The PIN was inline: one warning, which names the alternative and never the PIN.
        #expect(minted.stderr.contains("pin-source=file:"), "\(minted.stderr)")
        #expect(!minted.stderr.contains(token.pin + "&") && !minted.stderr.contains("=" + token.pin))
        let jws = try CompactJWS(minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(jws.keyID == "uploaded-1")
        #expect(try jws.payloadObject()["iss"]?.stringValue == email)
        if SoftHSM.pkcs11Tool != nil {
            try await CLI.detached {
                try token.pkcs11Tool(["--keypairgen", "--key-type", "EC:prime256v1", "--label", "ec", "--id", "e2"])
            }
        }
        var failures: [(String, String)] = [
            (token.uri(object: "driver", pin: "0000"), "PIN was refused"),
            (token.uri(object: "missing"), "No private key matches"),
        ]
        if SoftHSM.pkcs11Tool != nil { failures.append((token.uri(object: "ec"), "not an RSA key")) }
        for (bad, problem) in failures {
            let result = try await CLI.run(
                ["token-server", "--port", "0", "--signer", "driver=\(bad)", "--service-account", "driver=\(email)"],
                in: directory,
                environment: token.environment,
                timeout: 30
            )
            #expect(result.status == 1)
            #expect(result.stderr.contains(problem), "\(result.stderr)")
            #expect(!result.stderr.contains("0000"))
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
    }
}
