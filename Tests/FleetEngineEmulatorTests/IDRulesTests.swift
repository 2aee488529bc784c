import FleetAuthCore
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import Hummingbird
import HummingbirdTesting
import SwiftProtobuf
import Testing

/// IDs that could be created but never reached again over REST (`..`, `.`, a literal `a%2Fb`), and `*`, which no
/// claim could name apart from the wildcard that covers every resource, are refused with 400 INVALID_ARGUMENT on both
/// APIs and both transports, as the other ID rules are.
@Suite("ID rules for every kind of resource")
struct IDRulesTests {
    /// Each ID as it must reach the service (the query string's own escaping is added when it is sent).
    static let unreachable = ["..", ".", "a%2Fb", "%41", "x%2e%2E", "*"]

    static func query(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
    }

    @Test("FleetEngineID refuses dot steps, percent-escapes and the wildcard, and keeps what was valid")
    func rules() {
        for id in Self.unreachable {
            #expect(!FleetEngineID.isValid(id), "\(id)")
        }
        for id in ["...", "a.b", "..a", "100%", "50%off", "%g1", "a%2", "v1", "task-1", "**", "a*"] {
            #expect(FleetEngineID.isValid(id), "\(id)")
        }
    }

    @Test("REST: vehicles, trips, delivery vehicles and tasks with such IDs are 400 and not created")
    func rest() async throws {
        let accounts = EmulatorFixture.accounts + DeliveryFixture.accounts
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: accounts),
            store: try SQLiteFleetStore(inMemory: ())
        )
        try await Application(router: router).test(.router) { client in
            let base = "/v1/providers/demo-project"
            let task = DeliveryFixture.task("PICKUP", tracking: nil)
            for id in Self.unreachable {
                let q = Self.query(id)
                for (path, token, body) in [
                    ("\(base)/vehicles?vehicleId=\(q)", EmulatorFixture.server, EmulatorFixture.vehicleBody),
                    ("\(base)/trips?tripId=\(q)", EmulatorFixture.server, HTTPMatrixTests.tripBody),
                    ("\(base)/deliveryVehicles?deliveryVehicleId=\(q)", DeliveryFixture.server, "{}"),
                    ("\(base)/tasks?taskId=\(q)", DeliveryFixture.server, task),
                ] {
                    let (status, answer) = try await client.call(.post, path, token: token, body: body)
                    #expect(status == .badRequest, "\(path): \(answer.jsonText)")
                    #expect(answer["error"]?.objectValue?["status"] == "INVALID_ARGUMENT")
                }
            }
            let (listed, tasks) = try await client.call(.get, "\(base)/tasks", token: DeliveryFixture.server)
            #expect(listed == .ok && tasks["tasks"] == nil)
        }
    }

    @available(FleetAuthGRPC, *)
    @Test("gRPC: CreateTask and CreateDeliveryVehicle with such IDs are INVALID_ARGUMENT")
    func grpc() async throws {
        try await GRPCEmulator.with(accounts: EmulatorFixture.accounts + DeliveryFixture.accounts) { emulator in
            let deliveries = FleetEngineDelivery.DeliveryService.Client(wrapping: emulator.client)
            let server = bearer(DeliveryFixture.server)
            for id in Self.unreachable {
                var vehicle = FleetEngineDelivery.CreateDeliveryVehicleRequest()
                vehicle.parent = GRPCEmulator.provider
                vehicle.deliveryVehicleID = id
                let vehicleError = await rpcError {
                    _ = try await deliveries.createDeliveryVehicle(vehicle, metadata: server)
                }
                #expect(vehicleError?.code == .invalidArgument, "\(id)")
                var task = FleetEngineDelivery.CreateTaskRequest()
                task.parent = GRPCEmulator.provider
                task.taskID = id
                task.task = try FleetEngineDelivery.Task(
                    jsonString: DeliveryFixture.task("PICKUP", tracking: nil)
                )
                let taskError = await rpcError { _ = try await deliveries.createTask(task, metadata: server) }
                #expect(taskError?.code == .invalidArgument, "\(id)")
                let vehicleID = await rpcError {
                    _ = try await emulator.vehicles.createVehicle(
                        Requests.createVehicle(id),
                        metadata: bearer(EmulatorFixture.server)
                    )
                }
                #expect(vehicleID?.code == .invalidArgument, "\(id)")
            }
        }
    }
}
