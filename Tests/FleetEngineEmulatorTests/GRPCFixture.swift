import FleetAuthCore
import FleetAuthJWT
import FleetAuthTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Hummingbird
import HummingbirdTesting
import ServiceLifecycle
import SwiftProtobuf
import Testing

/// A live emulator for gRPC tests: its gRPC server on a free loopback port with a real HTTP/2 client connected
/// to it, and its REST router (the same service and store) behind Hummingbird's test client, so one test can
/// write through one transport and read through the other.
@available(FleetAuthGRPC, *)
struct GRPCEmulator: Sendable {
    typealias Transport = HTTP2ClientTransport.Posix
    let vehicles: FleetEngineV1.VehicleService.Client<Transport>
    let trips: FleetEngineV1.TripService.Client<Transport>
    /// The connection both clients use, for calls no generated client would make.
    let client: GRPCClient<Transport>
    let rest: any TestClientProtocol
    let store: SQLiteFleetStore
    /// The server's metrics.
    let metrics: EmulatorMetrics

    static let provider = "providers/demo-project"

    /// Runs `body` against a fresh emulator trusting `accounts`, on `clock`; shuts it down afterwards.
    static func with(
        accounts: [(TrustedServiceAccount, [RSAVerificationKey])] = EmulatorFixture.accounts,
        clock: any WallClock = .system,
        _ body: @Sendable (GRPCEmulator) async throws -> Void
    ) async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        // No idle close during a test: on a loaded machine a test's REST seeding can outlast the 30-second default,
        // and grpc-swift's client fails a call it starts while the server's idle GOAWAY is in flight (UNAVAILABLE,
        // "refused stream") instead of retrying it. GRPCConnectionTests checks the idle close itself.
        var configuration = EmulatorServer.Configuration()
        configuration.limits.idleTimeout = .seconds(3600)
        let server = EmulatorServer(configuration: configuration, accounts: accounts, store: store, clock: clock)
        let metrics = server.metrics
        let ports = AsyncStream<Int>.makeStream()
        let grpc = server.grpcServer(port: 0) { ports.continuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [grpc], logger: .silent(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await withGRPCClient(
                    transport: .http2NIOPosix(
                        target: .ipv4(address: "127.0.0.1", port: port),
                        transportSecurity: .plaintext
                    )
                ) { client in
                    try await Application(router: server.router).test(.router) { rest in
                        try await body(
                            GRPCEmulator(
                                vehicles: .init(wrapping: client),
                                trips: .init(wrapping: client),
                                client: client,
                                rest: rest,
                                store: store,
                                metrics: metrics
                            )
                        )
                    }
                }
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// Seeds, over REST with a server token: vehicles v1 (ONLINE, at the pickup) and v2; trips t1 (on v1) and t2.
    func seed(token: String = EmulatorFixture.server) async throws {
        let online = EmulatorFixture.vehicleBody.replacingOccurrences(of: "OFFLINE", with: "ONLINE")
        let vehicles = "/v1/\(Self.provider)/vehicles"
        let trips = "/v1/\(Self.provider)/trips"
        for (method, path, json) in [
            (HTTPRequest.Method.post, "\(vehicles)?vehicleId=v1", online),
            (.post, "\(vehicles)?vehicleId=v2", online),
            (.post, "\(trips)?tripId=t1", HTTPMatrixTests.tripBody),
            (.post, "\(trips)?tripId=t2", HTTPMatrixTests.tripBody),
            (.put, "\(trips)/t1?updateMask=vehicle_id", #"{"vehicleId":"v1"}"#),
        ] {
            let (status, body) = try await rest.call(method, path, token: token, body: json)
            try #require(status == .ok, "seeding \(path): \(body.jsonText)")
        }
    }
}

/// The call metadata Google's clients send: the token, and the routing header.
func bearer(_ token: String, resource: String? = nil) -> Metadata {
    var metadata: Metadata = ["authorization": "Bearer \(token)"]
    if let resource { metadata.addString("name=\(resource)", forKey: "x-goog-request-params") }
    return metadata
}

/// The `RPCError` that `body` throws (a test issue if it succeeds or throws anything else).
@available(FleetAuthGRPC, *)
func rpcError(
    _ body: () async throws -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> RPCError? {
    do {
        try await body()
        Issue.record("the call succeeded", sourceLocation: sourceLocation)
    } catch let error as RPCError {
        return error
    } catch {
        Issue.record("not an RPCError: \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

extension SwiftProtobuf.Message {
    /// The message parsed from proto3 JSON, as a REST client would.
    init(restJSON object: JSONObject) throws {
        try self.init(jsonString: object.jsonText)
    }
}

/// Small builders for request messages.
enum Requests {
    static func point(_ latitude: Double, _ longitude: Double) -> FleetEngineV1.LatLng {
        var point = FleetEngineV1.LatLng()
        point.latitude = latitude
        point.longitude = longitude
        return point
    }

    static func terminal(_ latitude: Double, _ longitude: Double) -> FleetEngineV1.TerminalLocation {
        var location = FleetEngineV1.TerminalLocation()
        location.point = point(latitude, longitude)
        return location
    }

    static func vehicle(state: FleetEngineV1.VehicleState = .offline) -> FleetEngineV1.Vehicle {
        var vehicle = FleetEngineV1.Vehicle()
        vehicle.vehicleState = state
        vehicle.supportedTripTypes = [.exclusive]
        vehicle.maximumCapacity = 4
        vehicle.vehicleType.category = .auto
        return vehicle
    }

    static func createVehicle(_ id: String, _ vehicle: FleetEngineV1.Vehicle = vehicle())
        -> FleetEngineV1.CreateVehicleRequest
    {
        var request = FleetEngineV1.CreateVehicleRequest()
        request.parent = GRPCEmulator.provider
        request.vehicleID = id
        request.vehicle = vehicle
        return request
    }

    static func getVehicle(_ id: String) -> FleetEngineV1.GetVehicleRequest {
        var request = FleetEngineV1.GetVehicleRequest()
        request.name = "\(GRPCEmulator.provider)/vehicles/\(id)"
        return request
    }

    static func updateVehicle(_ id: String, _ vehicle: FleetEngineV1.Vehicle, mask: [String])
        -> FleetEngineV1.UpdateVehicleRequest
    {
        var request = FleetEngineV1.UpdateVehicleRequest()
        request.name = "\(GRPCEmulator.provider)/vehicles/\(id)"
        request.vehicle = vehicle
        // No paths: no mask at all, as a REST update without `updateMask` transcodes.
        if !mask.isEmpty { request.updateMask.paths = mask }
        return request
    }

    static func move(_ id: String, to latitude: Double, _ longitude: Double) -> FleetEngineV1.UpdateVehicleRequest {
        var vehicle = FleetEngineV1.Vehicle()
        vehicle.lastLocation.location = point(latitude, longitude)
        return updateVehicle(id, vehicle, mask: ["last_location"])
    }

    static func trip(pickup: (Double, Double) = (37.4, -122.1), dropoff: (Double, Double) = (37.5, -122.2))
        -> FleetEngineV1.Trip
    {
        var trip = FleetEngineV1.Trip()
        trip.tripType = .exclusive
        trip.pickupPoint = terminal(pickup.0, pickup.1)
        trip.dropoffPoint = terminal(dropoff.0, dropoff.1)
        return trip
    }

    static func createTrip(_ id: String, _ trip: FleetEngineV1.Trip = trip()) -> FleetEngineV1.CreateTripRequest {
        var request = FleetEngineV1.CreateTripRequest()
        request.parent = GRPCEmulator.provider
        request.tripID = id
        request.trip = trip
        return request
    }

    static func getTrip(_ id: String) -> FleetEngineV1.GetTripRequest {
        var request = FleetEngineV1.GetTripRequest()
        request.name = "\(GRPCEmulator.provider)/trips/\(id)"
        return request
    }

    static func updateTrip(_ id: String, _ trip: FleetEngineV1.Trip, mask: [String]) -> FleetEngineV1.UpdateTripRequest
    {
        var request = FleetEngineV1.UpdateTripRequest()
        request.name = "\(GRPCEmulator.provider)/trips/\(id)"
        request.trip = trip
        request.updateMask.paths = mask
        return request
    }

    static func search(tripID: String = "") -> FleetEngineV1.SearchVehiclesRequest {
        var request = FleetEngineV1.SearchVehiclesRequest()
        request.parent = GRPCEmulator.provider
        request.pickupPoint = terminal(37.4, -122.1)
        request.pickupRadiusMeters = 5000
        request.count = 5
        request.minimumCapacity = 1
        request.tripTypes = [.exclusive]
        var type = FleetEngineV1.Vehicle.VehicleType()
        type.category = .auto
        request.vehicleTypes = [type]
        request.orderBy = .pickupPointDistance
        request.tripID = tripID
        return request
    }
}
