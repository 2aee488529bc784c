import FleetEngineAPI
import FleetEngineEmulator
import GRPCCore
import GRPCNIOTransportHTTP2
import ServiceLifecycle
import SwiftProtobuf

/// The gRPC reference of `fleetauth bench emulator`, as the trivial Hummingbird route is REST's: a
/// `VehicleService` whose UpdateVehicle answers the request's vehicle at once — no token, no policy, no store —
/// served by the same grpc-swift transport as the emulator, and on the same executor (NIO's event loops, as the
/// emulator's gRPC server prefers). Its rate is what gRPC itself costs on this machine.
@available(FleetAuthGRPC, *)
struct TrivialVehicleService: FleetEngineV1.VehicleService.SimpleServiceProtocol {
    func updateVehicle(request: FleetEngineV1.UpdateVehicleRequest, context: ServerContext) async throws
        -> FleetEngineV1.Vehicle
    {
        request.vehicle
    }

    func createVehicle(request: FleetEngineV1.CreateVehicleRequest, context: ServerContext) async throws
        -> FleetEngineV1.Vehicle
    { throw RPCError(code: .unimplemented, message: "") }
    func getVehicle(request: FleetEngineV1.GetVehicleRequest, context: ServerContext) async throws
        -> FleetEngineV1.Vehicle
    { throw RPCError(code: .unimplemented, message: "") }
    func deleteVehicle(request: FleetEngineV1.DeleteVehicleRequest, context: ServerContext) async throws
        -> Google_Protobuf_Empty
    { throw RPCError(code: .unimplemented, message: "") }
    func updateVehicleAttributes(request: FleetEngineV1.UpdateVehicleAttributesRequest, context: ServerContext)
        async throws -> FleetEngineV1.UpdateVehicleAttributesResponse
    { throw RPCError(code: .unimplemented, message: "") }
    func listVehicles(request: FleetEngineV1.ListVehiclesRequest, context: ServerContext) async throws
        -> FleetEngineV1.ListVehiclesResponse
    { throw RPCError(code: .unimplemented, message: "") }
    func searchVehicles(request: FleetEngineV1.SearchVehiclesRequest, context: ServerContext) async throws
        -> FleetEngineV1.SearchVehiclesResponse
    { throw RPCError(code: .unimplemented, message: "") }
}

/// A plaintext gRPC server for `TrivialVehicleService` on a free loopback port, as a service.
@available(FleetAuthGRPC, *)
struct TrivialGRPCServer: Service {
    let onServerRunning: @Sendable (Int) async -> Void

    func run() async throws {
        let server = GRPCServer(
            transport: HTTP2ServerTransport.Posix(
                address: .ipv4(host: "127.0.0.1", port: 0),
                transportSecurity: .plaintext
            ),
            services: [TrivialVehicleService()]
        )
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask(executorPreference: EventLoopTaskExecutor.singleton) { try await server.serve() }
            let address = try await server.transport.listeningAddress
            await onServerRunning(address.ipv4?.port ?? 0)
            try? await gracefulShutdown()
            server.beginGracefulShutdown()
        }
    }
}
