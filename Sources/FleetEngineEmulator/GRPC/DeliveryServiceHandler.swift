import FleetEngineAPI
import GRPCCore
import SwiftProtobuf

/// `maps.fleetengine.delivery.v1.DeliveryService` over gRPC: each method is ``DeliveryService``'s, as over REST.
@available(FleetAuthGRPC, *)
struct DeliveryServiceHandler: RegistrableRPCService {
    let call: GRPCCall
    let deliveries: DeliveryService
    /// The largest request message accepted (larger is `RESOURCE_EXHAUSTED`).
    let maximumMessageSize: Int

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        typealias Method = FleetEngineDelivery.DeliveryService.Method
        let limit = maximumMessageSize
        let service = deliveries
        router.registerUnary(Method.CreateDeliveryVehicle.descriptor, call, limit: limit) {
            try await service.createDeliveryVehicle($0, caller: $1)
        }
        router.registerUnary(Method.GetDeliveryVehicle.descriptor, call, limit: limit) {
            try await service.getDeliveryVehicle($0, caller: $1)
        }
        router.registerUnary(Method.DeleteDeliveryVehicle.descriptor, call, limit: limit) {
            try await service.deleteDeliveryVehicle($0, caller: $1)
            return Google_Protobuf_Empty()
        }
        router.registerUnary(Method.UpdateDeliveryVehicle.descriptor, call, limit: limit) {
            try await service.updateDeliveryVehicle($0, caller: $1)
        }
        router.registerUnary(Method.ListDeliveryVehicles.descriptor, call, limit: limit) {
            try await service.listDeliveryVehicles($0, caller: $1)
        }
        router.registerUnary(Method.CreateTask.descriptor, call, limit: limit) {
            try await service.createTask($0, caller: $1)
        }
        router.registerUnary(Method.BatchCreateTasks.descriptor, call, limit: limit) {
            try await service.batchCreateTasks($0, caller: $1)
        }
        router.registerUnary(Method.GetTask.descriptor, call, limit: limit) {
            try await service.getTask($0, caller: $1)
        }
        router.registerUnary(Method.UpdateTask.descriptor, call, limit: limit) {
            try await service.updateTask($0, caller: $1)
        }
        router.registerUnary(Method.DeleteTask.descriptor, call, limit: limit) {
            try await service.deleteTask($0, caller: $1)
            return Google_Protobuf_Empty()
        }
        router.registerUnary(Method.ListTasks.descriptor, call, limit: limit) {
            try await service.listTasks($0, caller: $1)
        }
        router.registerUnary(Method.GetTaskTrackingInfo.descriptor, call, limit: limit) {
            try await service.getTaskTrackingInfo($0, caller: $1)
        }
    }
}
