import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The test controls' reset (`POST /emulator/v1/providers/{provider}:reset`): one provider's vehicles, trips,
/// delivery vehicles, tasks and log entries gone at once, on both stores, the other providers untouched, and none
/// of it reachable without `--test-controls` and a server token of that provider.
@Suite("Test controls: reset", .temporaryResources)
struct ControlResetTests {
    typealias F = EmulatorFixture
    typealias D = DeliveryFixture
    static let otherDeliveryKey = try! TestKeys.keyNow(projectID: "other-project", name: "delivery-super")
    static let accounts =
        F.accounts + D.accounts + [
            (
                TrustedServiceAccount(
                    email: otherDeliveryKey.clientEmail,
                    project: "other-project",
                    roles: [.deliverySuperUser]
                ),
                [otherDeliveryKey.verificationKey]
            )
        ]
    static let otherServer = F.token(F.otherProjectKey, .server)
    static let otherDelivery = D.token(otherDeliveryKey, .deliveryServer)
    static let moved =
        #"{"lastLocation":{"location":{"latitude":37.42,"longitude":-122.08}},"vehicleState":"ONLINE"}"#

    static func reset(_ client: some TestClientProtocol, _ provider: String, token: String?) async throws
        -> (HTTPResponse.Status, JSONObject)
    {
        try await client.call(.post, "/emulator/v1/providers/\(provider):reset", token: token)
    }

    /// Creates, in `provider`, vehicle v1 (located, with an attribute), trip t1 on it, delivery vehicle dv1 and
    /// task task1, with that provider's server tokens.
    static func seed(
        _ client: some TestClientProtocol,
        _ provider: String,
        server: String,
        delivery: String
    ) async throws {
        let base = "/v1/providers/\(provider)"
        for (method, path, token, body) in [
            (HTTPRequest.Method.post, "/vehicles?vehicleId=v1", server, F.vehicleBody),
            (.put, "/vehicles/v1?updateMask=last_location,vehicle_state", server, moved),
            (.post, "/vehicles/v1:updateAttributes", server, #"{"attributes":[{"key":"fleet","value":"a"}]}"#),
            (.post, "/trips?tripId=t1", server, HTTPMatrixTests.tripBody),
            (.put, "/trips/t1?updateMask=vehicle_id", server, #"{"vehicleId":"v1"}"#),
            (.post, "/deliveryVehicles?deliveryVehicleId=dv1", delivery, "{}"),
            (.post, "/tasks?taskId=task1", delivery, D.task("DELIVERY", tracking: "track-1")),
        ] {
            let (status, answer) = try await client.call(method, base + path, token: token, body: body)
            try #require(status == .ok, "seeding \(provider)\(path): \(answer.jsonText)")
        }
    }

    /// The statuses of GET for each of the seeded entities of `provider`.
    static func statuses(_ client: some TestClientProtocol, _ provider: String, server: String, delivery: String)
        async throws -> [HTTPResponse.Status]
    {
        let base = "/v1/providers/\(provider)"
        var statuses: [HTTPResponse.Status] = []
        for (path, token) in [
            ("/vehicles/v1", server), ("/trips/t1", server), ("/deliveryVehicles/dv1", delivery),
            ("/tasks/task1", delivery),
        ] {
            statuses.append(try await client.call(.get, base + path, token: token).0)
        }
        return statuses
    }

    @Test(
        "deletes one provider's entities and log entries; the others stay; the IDs can be used again",
        arguments: FleetStoreDriver.all
    )
    func reset(_ driver: FleetStoreDriver) async throws {
        let server = EmulatorServer(
            configuration: .init(testControls: true),
            accounts: Self.accounts,
            store: try await driver.open().store
        )
        try await Application(router: server.router).test(.router) { client in
            try await Self.seed(client, F.project, server: F.server, delivery: D.server)
            try await Self.seed(client, "other-project", server: Self.otherServer, delivery: Self.otherDelivery)
            let before = try await RequestLogTests.list(client)
            #expect(!RequestLogTests.entries(before.1).isEmpty)

            let (status, answer) = try await Self.reset(client, F.project, token: F.server)
            #expect(status == .ok && answer == [:], "\(answer.jsonText)")

            #expect(
                try await Self.statuses(client, F.project, server: F.server, delivery: D.server) == [
                    .notFound, .notFound, .notFound, .notFound,
                ]
            )
            let base = "/v1/providers/\(F.project)"
            let (_, vehicles) = try await client.call(.get, "\(base)/vehicles?\(F.autos)", token: F.server)
            #expect(vehicles["vehicles"]?.arrayValue?.isEmpty ?? true, "\(vehicles.jsonText)")
            let (_, tasks) = try await client.call(.get, "\(base)/tasks", token: D.server)
            #expect(tasks["tasks"]?.arrayValue?.isEmpty ?? true, "\(tasks.jsonText)")
            // The log's entries of the provider went with it: what is left is what came after the reset.
            let (_, after) = try await RequestLogTests.list(client)
            let names = RequestLogTests.entries(after).compactMap { $0["logName"]?.stringValue }
            #expect(!names.contains { $0.hasSuffix("create_vehicle") || $0.hasSuffix("create_task") }, "\(names)")

            // The other provider is untouched, its log included.
            #expect(
                try await Self.statuses(client, "other-project", server: Self.otherServer, delivery: Self.otherDelivery)
                    == [.ok, .ok, .ok, .ok]
            )
            let (_, other) = try await RequestLogTests.list(client, token: Self.otherServer, project: "other-project")
            #expect(
                RequestLogTests.entries(other).contains {
                    $0["logName"]?.stringValue?.hasSuffix("create_vehicle") == true
                }
            )

            // Nothing of the old rows is left to clash with: the same IDs are created again, and the spatial index
            // and the counts start from empty.
            try await Self.seed(client, F.project, server: F.server, delivery: D.server)
            #expect(
                try await Self.statuses(client, F.project, server: F.server, delivery: D.server) == [
                    .ok, .ok, .ok, .ok,
                ]
            )
            let (_, listed) = try await client.call(.get, "\(base)/vehicles?\(F.autos)", token: F.server)
            #expect(listed["vehicles"]?.arrayValue?.count == 1, "\(listed.jsonText)")
        }
    }

    @Test("refused without --test-controls, without a token, and to any token but the provider's server token")
    func access() async throws {
        let off = EmulatorServer(accounts: Self.accounts, store: try SQLiteFleetStore(inMemory: ()))
        try await Application(router: off.router).test(.router) { client in
            try await Self.seed(client, F.project, server: F.server, delivery: D.server)
            let (status, _) = try await Self.reset(client, F.project, token: F.server)
            #expect(status == .notFound)
            #expect(
                try await Self.statuses(client, F.project, server: F.server, delivery: D.server) == [
                    .ok, .ok, .ok, .ok,
                ]
            )
        }
        let on = EmulatorServer(
            configuration: .init(testControls: true),
            accounts: Self.accounts,
            store: try SQLiteFleetStore(inMemory: ())
        )
        try await Application(router: on.router).test(.router) { client in
            try await Self.seed(client, F.project, server: F.server, delivery: D.server)
            #expect(try await Self.reset(client, F.project, token: nil).0 == .unauthorized)
            for token in [F.driver("v1"), F.consumer("t1"), D.reader, Self.otherServer, Self.otherDelivery] {
                let (status, answer) = try await Self.reset(client, F.project, token: token)
                #expect(status == .forbidden, "\(answer.jsonText)")
                #expect(answer["error"]?.objectValue?["status"] == "PERMISSION_DENIED")
            }
            #expect(
                try await Self.statuses(client, F.project, server: F.server, delivery: D.server) == [
                    .ok, .ok, .ok, .ok,
                ]
            )
            // A Deliveries server token of the provider resets it too.
            #expect(try await Self.reset(client, F.project, token: D.server).0 == .ok)
            #expect(
                try await Self.statuses(client, F.project, server: F.server, delivery: D.server) == [
                    .notFound, .notFound, .notFound, .notFound,
                ]
            )
        }
    }

    @Test(
        "a reset racing updates: each update succeeds or finds no vehicle, and nothing of the provider is left",
        arguments: FleetStoreDriver.all
    )
    func racingWrites(_ driver: FleetStoreDriver) async throws {
        let server = EmulatorServer(
            configuration: .init(testControls: true),
            accounts: Self.accounts,
            store: try await driver.open().store
        )
        try await Application(router: server.router).test(.router) { client in
            let base = "/v1/providers/\(F.project)/vehicles"
            for index in 0..<20 {
                let (status, _) = try await client.call(
                    .post,
                    "\(base)?vehicleId=v\(index)",
                    token: F.server,
                    body: F.vehicleBody
                )
                try #require(status == .ok)
            }
            let statuses = try await withThrowingTaskGroup(of: [HTTPResponse.Status].self) { group in
                for index in 0..<20 {
                    group.addTask {
                        var statuses: [HTTPResponse.Status] = []
                        for _ in 0..<5 {
                            statuses.append(
                                try await client.call(
                                    .put,
                                    "\(base)/v\(index)?updateMask=last_location,vehicle_state",
                                    token: F.server,
                                    body: Self.moved
                                ).0
                            )
                        }
                        return statuses
                    }
                }
                group.addTask { [try await Self.reset(client, F.project, token: F.server).0] }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses.count == 101)
            #expect(statuses.allSatisfy { $0 == .ok || $0 == .notFound }, "\(statuses)")
            let (_, listed) = try await client.call(.get, "\(base)?\(F.autos)", token: F.server)
            #expect(listed["vehicles"]?.arrayValue?.isEmpty ?? true, "\(listed.jsonText)")
        }
    }

    /// How many vehicles SearchVehicles finds around the located vehicles of ``seed``.
    static func found(_ client: some TestClientProtocol, _ provider: String, token: String) async throws -> Int {
        let search =
            #"{"pickupPoint":{"point":{"latitude":37.42,"longitude":-122.08}},"pickupRadiusMeters":5000,"count":50,"minimumCapacity":1,"tripTypes":["EXCLUSIVE"],"vehicleTypes":[{"category":"AUTO"}],"orderBy":"PICKUP_POINT_ETA"}"#
        let (status, answer) = try await client.call(
            .post,
            "/v1/providers/\(provider)/vehicles:search",
            token: token,
            body: search
        )
        try #require(status == .ok, "\(answer.jsonText)")
        return answer["matches"]?.arrayValue?.count ?? 0
    }

    @Test(
        "the spatial index after a reset, made again or trimmed: others' vehicles are still found, the provider's not",
        arguments: FleetStoreDriver.all,
        [(3, 1), (1, 3)]
    )
    func spatialIndex(_ driver: FleetStoreDriver, counts: (mine: Int, others: Int)) async throws {
        let server = EmulatorServer(
            configuration: .init(testControls: true),
            accounts: Self.accounts,
            store: try await driver.open().store
        )
        try await Application(router: server.router).test(.router) { client in
            for (provider, token, count) in [
                (F.project, F.server, counts.mine), ("other-project", Self.otherServer, counts.others),
            ] {
                for index in 0..<count {
                    let base = "/v1/providers/\(provider)/vehicles"
                    for (method, path, body) in [
                        (HTTPRequest.Method.post, "?vehicleId=v\(index)", F.vehicleBody),
                        (.put, "/v\(index)?updateMask=last_location,vehicle_state", Self.moved),
                    ] {
                        let (status, answer) = try await client.call(method, base + path, token: token, body: body)
                        try #require(status == .ok, "\(answer.jsonText)")
                    }
                }
            }
            #expect(try await Self.found(client, F.project, token: F.server) == counts.mine)
            #expect(try await Self.reset(client, F.project, token: F.server).0 == .ok)
            #expect(try await Self.found(client, F.project, token: F.server) == 0)
            #expect(try await Self.found(client, "other-project", token: Self.otherServer) == counts.others)
            // The index takes new vehicles again.
            let base = "/v1/providers/\(F.project)/vehicles"
            _ = try await client.call(.post, "\(base)?vehicleId=v9", token: F.server, body: F.vehicleBody)
            _ = try await client.call(
                .put,
                "\(base)/v9?updateMask=last_location,vehicle_state",
                token: F.server,
                body: Self.moved
            )
            #expect(try await Self.found(client, F.project, token: F.server) == 1)
        }
    }
}
