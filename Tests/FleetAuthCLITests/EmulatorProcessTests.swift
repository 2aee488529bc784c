import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `fleetauth emulator` process on a free loopback port.
final class EmulatorProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    /// The IAM stand-ins' port, when `--iam-port` turned them on.
    let iamPort: Int?
    private let output = Pipe()

    init(arguments: [String], directory: String) throws {
        process.executableURL = CLI.executable
        process.arguments = ["emulator", "--port", "0", "--grpc-port", "0"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let withIAM = arguments.contains("--iam-port")
        let ports = try ListeningProcess.ports(
            of: process,
            output: output,
            markers: ["listening on http://127.0.0.1:"] + (withIAM ? ["(local use only) on http://127.0.0.1:"] : [])
        )
        port = ports[0]
        iamPort = withIAM ? ports[1] : nil
    }

    /// Ends the process the hard way, as a crash would.
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func request(_ method: String, _ path: String, token: String, body: String? = nil) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}

struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@Suite("fleetauth emulator (live socket)", .temporaryResources, .serialized)
struct EmulatorProcessTests {
    @Test("zero-configuration start; a write that returned 200 survives kill -9; tokens are checked on a real socket")
    func durableAcrossKill() async throws {
        let directory = try CLI.temporaryDirectory()
        let first = try await CLI.detached { try EmulatorProcess(arguments: [], directory: directory) }
        let keys = directory + "/fleet-engine-data/keys"
        for role in ["consumer-sdk-user", "driver-sdk-user", "service-super-user", "viewer", "delivery-admin"] {
            #expect(FileManager.default.fileExists(atPath: "\(keys)/\(role).json"), "\(role)")
        }
        let minter = try FleetEngineTokenMinter(
            signer: LocalKeySigner(key: ServiceAccountKey(contentsOf: "\(keys)/service-super-user.json"))
        )
        let server = try await minter.mint(.server).jwt
        let body =
            #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#
        let (created, _) = try await first.request(
            "POST",
            "/v1/providers/demo-project/vehicles?vehicleId=durable-1",
            token: server,
            body: body
        )
        #expect(created == 200)
        first.kill9()

        // The same data directory: the same keys are reused and the vehicle is still there.
        let second = try await CLI.detached { try EmulatorProcess(arguments: [], directory: directory) }
        defer { second.kill9() }
        let (status, text) = try await second.request(
            "GET",
            "/v1/providers/demo-project/vehicles/durable-1",
            token: server
        )
        #expect(status == 200)
        #expect(text.contains(#""name":"providers/demo-project/vehicles/durable-1""#))

        let driver = try await FleetEngineTokenMinter(
            signer: LocalKeySigner(key: ServiceAccountKey(contentsOf: "\(keys)/driver-sdk-user.json"))
        )
        .mint(.driver(vehicleID: "other")).jwt
        let (denied, error) = try await second.request(
            "GET",
            "/v1/providers/demo-project/vehicles/durable-1",
            token: driver
        )
        #expect(denied == 403)
        #expect(error.contains(#""status":"PERMISSION_DENIED""#))
        let (unauthenticated, _) = try await second.request(
            "GET",
            "/v1/providers/demo-project/vehicles/durable-1",
            token: server + "x"
        )
        #expect(unauthenticated == 401)
    }

    @Test("--trust with an unknown role fails with a message naming the entry")
    func badTrustFile() async throws {
        let directory = try CLI.temporaryDirectory()
        let path = directory + "/trust.json"
        #expect(
            FileManager.default.createFile(
                atPath: path,
                contents: Data(
                    #"{"serviceAccounts":[{"email":"a@b","project":"p","roles":["roles/fleetengine.pilot"],"keyFile":"k.json"}]}"#
                        .utf8
                )
            )
        )
        let out = try await CLI.run(["emulator", "--trust", path, "--in-memory", "--port", "0"], in: directory)
        #expect(out.status == 1)
        #expect(out.stderr.contains("serviceAccounts[0].roles"))
        // With --trust and --in-memory there are no keys to provision and no database file: no data directory.
        #expect(!FileManager.default.fileExists(atPath: directory + "/fleet-engine-data"))
    }

    @Test(
        "--database: a bad URL, a refused connection and wrong credentials are one clear line naming the host, never the password",
        arguments: [
            ("mysql://u:secret-pw@127.0.0.1/db", "scheme"),
            ("postgres://u:secret-pw@127.0.0.1:99999/db", "port"),
            ("postgres://u:secret-pw@127.0.0.1:1/db?sslmode=disable", "127.0.0.1:1/db"),
        ]
    )
    func badDatabase(_ url: String, _ mentions: String) async throws {
        let directory = try await CLI.provisionedDirectory()
        let out = try await CLI.run(["emulator", "--database", url, "--port", "0", "--grpc-port", "0"], in: directory)
        #expect(out.status == 1)
        #expect(out.stderr.contains(mentions), "\(out.stderr)")
        #expect(!out.stderr.contains("secret-pw"))
        #expect(!out.stdout.contains("secret-pw"))
        #expect(out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
    }

    @Test(
        "--database with a wrong password names the server and the user, not the password",
        .enabled(if: PostgresCLIServer.url != nil, "no PostgreSQL server: set FLEETAUTH_TEST_POSTGRES_URL")
    )
    func wrongPassword() async throws {
        let url = try #require(PostgresCLIServer.url)
        let wrong = url.replacingOccurrences(of: "://postgres:", with: "://postgres:not-the-password-")
        let out = try await CLI.run(
            ["emulator", "--database", wrong, "--port", "0"],
            in: try CLI.temporaryDirectory(),
            timeout: 60
        )
        #expect(out.status == 1)
        #expect(out.stderr.contains("as postgres"), "\(out.stderr)")
        #expect(!out.stderr.contains("not-the-password"))
    }
}

/// `FLEETAUTH_TEST_POSTGRES_URL`, for the CLI's PostgreSQL cases (see the emulator tests' `PostgresTestServer`).
enum PostgresCLIServer {
    static let url = ProcessInfo.processInfo.environment["FLEETAUTH_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }
}

@Suite("fleetauth emulator: SIGTERM under load", .temporaryResources, .serialized)
struct GracefulShutdownTests {
    @Test("SIGTERM while writes are in flight: exit 0, and every write answered 200 is there after a restart")
    func sigtermUnderLoad() async throws {
        let directory = try await CLI.provisionedDirectory()
        let first = try await CLI.detached { try EmulatorProcess(arguments: [], directory: directory) }
        let keys = directory + "/fleet-engine-data/keys"
        let server = try await FleetEngineTokenMinter(
            signer: LocalKeySigner(key: ServiceAccountKey(contentsOf: "\(keys)/service-super-user.json"))
        ).mint(.server).jwt
        let body =
            #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#
        // Eight writers create vehicles one after another until the server stops answering; the signal comes once
        // 40 writes were answered (not after a fixed time: a loaded machine may answer only a few in a second).
        let answered = AnsweredCount()
        let acknowledged = try await withThrowingTaskGroup(of: [String].self) { group in
            for writer in 0..<8 {
                group.addTask {
                    var created: [String] = []
                    for index in 0..<10_000 {
                        let id = "w\(writer)-\(index)"
                        guard
                            let (status, _) = try? await first.request(
                                "POST",
                                "/v1/providers/demo-project/vehicles?vehicleId=\(id)",
                                token: server,
                                body: body
                            ), status == 200
                        else { return created }
                        created.append(id)
                        answered.increment()
                    }
                    return created
                }
            }
            group.addTask {
                try await Waiting.until("40 writes answered before SIGTERM", every: .milliseconds(20)) {
                    answered.value >= 40
                }
                kill(first.process.processIdentifier, SIGTERM)
                return []
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let status = try await CLI.detached {
            first.process.waitUntilExit()
            return first.process.terminationStatus
        }
        #expect(status == 0)
        #expect(acknowledged.count >= 40, "the load did not run before the signal")

        let second = try await CLI.detached { try EmulatorProcess(arguments: [], directory: directory) }
        defer { second.kill9() }
        var stored = Set<String>()
        var pageToken = ""
        repeat {
            let (listed, text) = try await second.request(
                "GET",
                "/v1/providers/demo-project/vehicles?vehicleTypeCategories=AUTO&pageSize=1000&pageToken=\(pageToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
                token: server
            )
            #expect(listed == 200)
            let page = try StrictJSONParser().parseObject(Array(text.utf8))
            for vehicle in page["vehicles"]?.arrayValue ?? [] {
                if let name = vehicle.objectValue?["name"]?.stringValue { stored.insert(name) }
            }
            pageToken = page["nextPageToken"]?.stringValue ?? ""
        } while !pageToken.isEmpty
        let missing = acknowledged.filter { !stored.contains("providers/demo-project/vehicles/\($0)") }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(10))")
    }
}

/// How many writes the server answered, across the writers.
final class AnsweredCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
