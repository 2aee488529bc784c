import FleetEngineAPI
import GRPCCore
import SwiftProtobuf

/// `maps.fleetengine.v1.VehicleService` over gRPC: each method is ``FleetEngineService``'s, as over REST.
@available(FleetAuthGRPC, *)
struct VehicleServiceHandler: FleetEngineV1.VehicleService.ServiceProtocol {
    let call: GRPCCall
    /// The largest request message accepted (larger is `RESOURCE_EXHAUSTED`).
    let maximumMessageSize: Int
    var service: FleetEngineService { call.service }

    /// The methods, each with the message size check of ``LimitedProtobufDeserializer``.
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        typealias Method = FleetEngineV1.VehicleService.Method
        let limit = maximumMessageSize
        router.registerUnary(Method.CreateVehicle.descriptor, limit: limit) {
            try await createVehicle(request: $0, context: $1)
        }
        router.registerUnary(Method.GetVehicle.descriptor, limit: limit) {
            try await getVehicle(request: $0, context: $1)
        }
        router.registerUnary(Method.DeleteVehicle.descriptor, limit: limit) {
            try await deleteVehicle(request: $0, context: $1)
        }
        router.registerUnary(Method.UpdateVehicle.descriptor, limit: limit) {
            try await updateVehicle(request: $0, context: $1)
        }
        router.registerUnary(Method.UpdateVehicleAttributes.descriptor, limit: limit) {
            try await updateVehicleAttributes(request: $0, context: $1)
        }
        router.registerUnary(Method.ListVehicles.descriptor, limit: limit) {
            try await listVehicles(request: $0, context: $1)
        }
        router.registerUnary(Method.SearchVehicles.descriptor, limit: limit) {
            try await searchVehicles(request: $0, context: $1)
        }
    }

    func createVehicle(
        request: ServerRequest<FleetEngineV1.CreateVehicleRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.Vehicle> {
        try await call.run("VehicleService/CreateVehicle", request) { try await service.createVehicle($0, caller: $1) }
    }

    func getVehicle(
        request: ServerRequest<FleetEngineV1.GetVehicleRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.Vehicle> {
        try await call.run("VehicleService/GetVehicle", request) { try await service.getVehicle($0, caller: $1) }
    }

    func deleteVehicle(
        request: ServerRequest<FleetEngineV1.DeleteVehicleRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<Google_Protobuf_Empty> {
        try await call.run("VehicleService/DeleteVehicle", request) {
            try await service.deleteVehicle($0, caller: $1)
            return Google_Protobuf_Empty()
        }
    }

    func updateVehicle(
        request: ServerRequest<FleetEngineV1.UpdateVehicleRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.Vehicle> {
        try await call.run("VehicleService/UpdateVehicle", request) { try await service.updateVehicle($0, caller: $1) }
    }

    func updateVehicleAttributes(
        request: ServerRequest<FleetEngineV1.UpdateVehicleAttributesRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.UpdateVehicleAttributesResponse> {
        try await call.run("VehicleService/UpdateVehicleAttributes", request) {
            try await service.updateVehicleAttributes($0, caller: $1)
        }
    }

    func listVehicles(
        request: ServerRequest<FleetEngineV1.ListVehiclesRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.ListVehiclesResponse> {
        try await call.run("VehicleService/ListVehicles", request) { try await service.listVehicles($0, caller: $1) }
    }

    func searchVehicles(
        request: ServerRequest<FleetEngineV1.SearchVehiclesRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.SearchVehiclesResponse> {
        try await call.run("VehicleService/SearchVehicles", request) {
            try await service.searchVehicles($0, caller: $1)
        }
    }
}
