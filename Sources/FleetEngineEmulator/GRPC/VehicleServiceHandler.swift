import FleetEngineAPI
import GRPCCore
import SwiftProtobuf

/// `maps.fleetengine.v1.VehicleService` over gRPC: each method is ``FleetEngineService``'s, as over REST.
@available(FleetAuthGRPC, *)
struct VehicleServiceHandler: RegistrableRPCService {
    let call: GRPCCall
    /// The largest request message accepted (larger is `RESOURCE_EXHAUSTED`).
    let maximumMessageSize: Int

    /// The methods: each authenticates, then reads its message (size-checked by ``LimitedProtobufDeserializer``).
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        typealias Method = FleetEngineV1.VehicleService.Method
        let limit = maximumMessageSize
        let service = call.service
        router.registerUnary(Method.CreateVehicle.descriptor, call, limit: limit) {
            try await service.createVehicle($0, caller: $1)
        }
        router.registerUnary(Method.GetVehicle.descriptor, call, limit: limit) {
            try await service.getVehicle($0, caller: $1)
        }
        router.registerUnary(Method.DeleteVehicle.descriptor, call, limit: limit) {
            try await service.deleteVehicle($0, caller: $1)
            return Google_Protobuf_Empty()
        }
        router.registerUnary(Method.UpdateVehicle.descriptor, call, limit: limit) {
            try await service.updateVehicle($0, caller: $1)
        }
        router.registerUnary(Method.UpdateVehicleAttributes.descriptor, call, limit: limit) {
            try await service.updateVehicleAttributes($0, caller: $1)
        }
        router.registerUnary(Method.ListVehicles.descriptor, call, limit: limit) {
            try await service.listVehicles($0, caller: $1)
        }
        router.registerUnary(Method.SearchVehicles.descriptor, call, limit: limit) {
            try await service.searchVehicles($0, caller: $1)
        }
    }
}
