import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import Hummingbird
import HummingbirdTesting
import Testing

/// The fleet console's reader token (`fleet_reader`, `*` for every claim) signed by an account whose only role is
/// Fleet Engine Viewer, as the token server's reader family signs it: every read the console makes works, and no
/// write does, on either API or transport, whatever its claims say.
@Suite("A fleet reader token reads and never writes")
struct FleetReaderTests {
    static let viewerKey = try! TestKeys.keyNow(projectID: "demo-project", name: "fleetauth-reader")
    static let accounts =
        EmulatorFixture.accounts + DeliveryFixture.accounts + [
            (
                TrustedServiceAccount(email: viewerKey.clientEmail, project: "demo-project", roles: [.viewer]),
                [viewerKey.verificationKey]
            )
        ]
    static let reader = EmulatorFixture.token(viewerKey, .fleetReader)
    static let base = "/v1/providers/demo-project"

    @Test("REST: reads answer 200; every write of both APIs is 403 and changes nothing")
    func rest() async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: Self.accounts),
            store: store
        )
        try await Application(router: router).test(.router) { client in
            let server = EmulatorFixture.server
            let delivery = DeliveryFixture.server
            let task = DeliveryFixture.task("DELIVERY", tracking: "track-1")
            for (method, path, token, body) in [
                (HTTPRequest.Method.post, "\(Self.base)/vehicles?vehicleId=v1", server, EmulatorFixture.vehicleBody),
                (.post, "\(Self.base)/trips?tripId=t1", server, HTTPMatrixTests.tripBody),
                (.post, "\(Self.base)/deliveryVehicles?deliveryVehicleId=dv1", delivery, "{}"),
                (.post, "\(Self.base)/tasks?taskId=task1", delivery, task),
            ] {
                let (status, answer) = try await client.call(method, path, token: token, body: body)
                try #require(status == .ok, "seeding \(path): \(answer.jsonText)")
            }
            for path in [
                "/vehicles/v1", "/vehicles?\(EmulatorFixture.autos)", "/trips/t1", "/deliveryVehicles/dv1",
                "/deliveryVehicles", "/tasks/task1",
                "/tasks", "/taskTrackingInfo/track-1",
            ] {
                let (status, answer) = try await client.call(.get, Self.base + path, token: Self.reader)
                #expect(status == .ok, "GET \(path): \(answer.jsonText)")
            }
            let writes: [(HTTPRequest.Method, String, String?)] = [
                (.post, "/vehicles?vehicleId=v2", EmulatorFixture.vehicleBody),
                (.put, "/vehicles/v1?updateMask=vehicleState", #"{"vehicleState":"ONLINE"}"#),
                (.post, "/vehicles/v1:updateAttributes", #"{"attributes":[{"key":"a","value":"b"}]}"#),
                (.delete, "/vehicles/v1", nil),
                (.post, "/trips?tripId=t2", HTTPMatrixTests.tripBody),
                (.put, "/trips/t1?updateMask=vehicle_id", #"{"vehicleId":"v1"}"#),
                (.delete, "/trips/t1", nil),
                (.post, "/deliveryVehicles?deliveryVehicleId=dv2", "{}"),
                (.patch, "/deliveryVehicles/dv1?updateMask=type", #"{"type":"TWO_WHEELER"}"#),
                (.delete, "/deliveryVehicles/dv1", nil),
                (.post, "/tasks?taskId=task2", task),
                (.patch, "/tasks/task1?updateMask=taskOutcome", #"{"taskOutcome":"SUCCEEDED"}"#),
                (.post, "/tasks:batchCreate", #"{"requests":[{"taskId":"task3","task":\#(task)}]}"#),
                (.delete, "/tasks/task1", nil),
            ]
            for (method, path, body) in writes {
                let (status, answer) = try await client.call(method, Self.base + path, token: Self.reader, body: body)
                #expect(status == .forbidden, "\(method) \(path): \(answer.jsonText)")
            }
            // Nothing changed.
            let (_, vehicle) = try await client.call(.get, "\(Self.base)/vehicles/v1", token: server)
            #expect(vehicle["vehicleState"] == "OFFLINE")
            #expect(try await client.call(.get, "\(Self.base)/vehicles/v2", token: server).0 == .notFound)
            #expect(try await client.call(.get, "\(Self.base)/deliveryVehicles/dv2", token: delivery).0 == .notFound)
            #expect(try await client.call(.get, "\(Self.base)/tasks/task2", token: delivery).0 == .notFound)
        }
    }

    @available(FleetAuthGRPC, *)
    @Test("gRPC: reads succeed; writes of both APIs are PERMISSION_DENIED")
    func grpc() async throws {
        try await GRPCEmulator.with(accounts: Self.accounts) { emulator in
            try await emulator.seed()
            let reader = bearer(Self.reader)
            _ = try await emulator.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: reader)
            _ = try await emulator.trips.getTrip(Requests.getTrip("t1"), metadata: reader)
            let deliveries = FleetEngineDelivery.DeliveryService.Client(wrapping: emulator.client)
            var listVehicles = FleetEngineDelivery.ListDeliveryVehiclesRequest()
            listVehicles.parent = GRPCEmulator.provider
            _ = try await deliveries.listDeliveryVehicles(listVehicles, metadata: reader)

            var createDeliveryVehicle = FleetEngineDelivery.CreateDeliveryVehicleRequest()
            createDeliveryVehicle.parent = GRPCEmulator.provider
            createDeliveryVehicle.deliveryVehicleID = "dv9"
            createDeliveryVehicle.deliveryVehicle = .init()
            let createRequest = createDeliveryVehicle
            let online = Requests.vehicle(state: .online)
            let calls: [(String, @Sendable () async throws -> Void)] = [
                (
                    "CreateVehicle",
                    { _ = try await emulator.vehicles.createVehicle(Requests.createVehicle("v9"), metadata: reader) }
                ),
                (
                    "UpdateVehicle",
                    {
                        _ = try await emulator.vehicles.updateVehicle(
                            Requests.updateVehicle("v1", online, mask: ["vehicle_state"]),
                            metadata: reader
                        )
                    }
                ),
                (
                    "CreateTrip",
                    { _ = try await emulator.trips.createTrip(Requests.createTrip("t9"), metadata: reader) }
                ),
                (
                    "CreateDeliveryVehicle",
                    { _ = try await deliveries.createDeliveryVehicle(createRequest, metadata: reader) }
                ),
            ]
            for (name, call) in calls {
                let error = await rpcError(call)
                #expect(error?.code == .permissionDenied, "\(name): \(String(describing: error))")
            }
        }
    }
}
