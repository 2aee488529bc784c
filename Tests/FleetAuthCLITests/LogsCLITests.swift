import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import Foundation
import Testing

@Suite("fleetauth logs and token verify --explain (live emulator)", .temporaryResources, .serialized)
struct LogsCLITests {
    @Test("a refused call's line gives its reason; --format json and --export give the entries; --explain agrees")
    func logs() async throws {
        let directory = try CLI.temporaryDirectory()
        let emulator = try await CLI.detached { try EmulatorProcess(arguments: [], directory: directory) }
        defer { emulator.kill9() }
        let data = directory + "/fleet-engine-data"
        let minter = { (role: String) in
            try FleetEngineTokenMinter(
                signer: LocalKeySigner(key: ServiceAccountKey(contentsOf: "\(data)/keys/\(role).json"))
            )
        }
        let server = try minter("service-super-user").mintSynchronously(.server).jwt
        let body =
            #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#
        let base = "/v1/providers/demo-project/vehicles"
        #expect(try await emulator.request("POST", "\(base)?vehicleId=v1", token: server, body: body).0 == 200)
        let wrongDriver = try minter("driver-sdk-user").mintSynchronously(.driver(vehicleID: "v2")).jwt
        #expect(try await emulator.request("GET", "\(base)/v1", token: wrongDriver).0 == 403)

        let url = "http://127.0.0.1:\(emulator.port)"
        let lines = try await CLI.run(["logs", "--emulator", url], in: directory, timeout: 60)
        #expect(lines.status == 0, "\(lines.stderr)")
        let printed = lines.stdout.split(separator: "\n").map(String.init)
        try #require(printed.count == 2, "\(lines.stdout)")
        #expect(printed[0].contains("  OK  rest  CreateVehicle  vehicle_id=v1"))
        #expect(printed[1].contains("PERMISSION_DENIED  rest  GetVehicle  vehicle_id=v1"))
        #expect(printed[1].contains("vehicleid"), "the refusal names the claim: \(printed[1])")

        let refused = try await CLI.run(
            ["logs", "--emulator", url, "--format", "json", #"jsonPayload.errorResponse.code="PERMISSION_DENIED""#],
            in: directory,
            timeout: 60
        )
        let entries = try refused.stdout.split(separator: "\n").map { try StrictJSONParser().parseObject(String($0)) }
        try #require(entries.count == 1, "\(refused.stdout) \(refused.stderr)")
        let decision = try #require(entries[0]["jsonPayload"]?.objectValue?["fleetauthDecision"]?.objectValue)

        let file = directory + "/export.json"
        let exported = try await CLI.run(["logs", "--emulator", url, "--export", file], in: directory, timeout: 60)
        #expect(exported.stdout.contains("Wrote 2 entries"), "\(exported.stdout) \(exported.stderr)")
        let array = try StrictJSONParser(maximumDepth: 64).parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        )
        #expect(array.arrayValue?.count == 2)

        let explained = try await CLI.run(
            [
                "token", "verify", "--explain", "--json", "--trust", data + "/trust.json", "--rpc", "GetVehicle",
                "--resource", "providers/demo-project/vehicles/v1", wrongDriver,
            ],
            in: directory,
            timeout: 60
        )
        let offline = try StrictJSONParser().parseObject(
            explained.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        )
        #expect(offline["check"] == decision["check"] && offline["explanation"] == decision["explanation"])

        let denied = try await CLI.run(
            ["logs", "--emulator", url, "--key", data + "/keys/driver-sdk-user.json"],
            in: directory,
            timeout: 60
        )
        #expect(denied.status != 0 && denied.stderr.contains("403"), "\(denied.stderr)")
    }

    @Test("entries are written while the emulator runs, and the last ones at SIGTERM: a restart lists them all")
    func survivesRestart() async throws {
        let directory = try CLI.temporaryDirectory()
        let first = try await CLI.detached { try EmulatorProcess(arguments: [], directory: directory) }
        let data = directory + "/fleet-engine-data"
        let server = try FleetEngineTokenMinter(
            signer: LocalKeySigner(key: ServiceAccountKey(contentsOf: "\(data)/keys/service-super-user.json"))
        ).mintSynchronously(.server).jwt
        for id in ["a", "b", "c"] {
            _ = try await first.request("GET", "/v1/providers/demo-project/vehicles/\(id)", token: server)
        }
        first.process.terminate()
        try await CLI.detached { first.process.waitUntilExit() }
        #expect(first.process.terminationStatus == 0)

        let second = try await CLI.detached { try EmulatorProcess(arguments: [], directory: directory) }
        defer { second.kill9() }
        let lines = try await CLI.run(
            ["logs", "--emulator", "http://127.0.0.1:\(second.port)"],
            in: directory,
            timeout: 60
        )
        let printed = lines.stdout.split(separator: "\n")
        #expect(printed.count == 3, "\(lines.stdout) \(lines.stderr)")
        #expect(printed.allSatisfy { $0.contains("NOT_FOUND  rest  GetVehicle") }, "\(lines.stdout)")
    }
}
