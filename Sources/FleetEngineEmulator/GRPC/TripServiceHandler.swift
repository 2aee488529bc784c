import FleetEngineAPI
import GRPCCore
import SwiftProtobuf

/// `maps.fleetengine.v1.TripService` over gRPC: each method is ``FleetEngineService``'s, as over REST.
@available(FleetAuthGRPC, *)
struct TripServiceHandler: RegistrableRPCService {
    let call: GRPCCall
    /// The largest request message accepted (larger is `RESOURCE_EXHAUSTED`).
    let maximumMessageSize: Int

    /// The methods: each authenticates, then reads its message (size-checked by ``LimitedProtobufDeserializer``).
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        typealias Method = FleetEngineV1.TripService.Method
        let limit = maximumMessageSize
        let service = call.service
        router.registerUnary(Method.CreateTrip.descriptor, call, limit: limit) {
            try await service.createTrip($0, caller: $1)
        }
        router.registerUnary(Method.GetTrip.descriptor, call, limit: limit) {
            try await service.getTrip($0, caller: $1)
        }
        router.registerUnary(Method.DeleteTrip.descriptor, call, limit: limit) {
            try await service.deleteTrip($0, caller: $1)
            return Google_Protobuf_Empty()
        }
        router.registerUnary(Method.ReportBillableTrip.descriptor, call, limit: limit) {
            try await service.reportBillableTrip($0, caller: $1)
            return Google_Protobuf_Empty()
        }
        router.registerUnary(Method.SearchTrips.descriptor, call, limit: limit) {
            try await service.searchTrips($0, caller: $1)
        }
        router.registerUnary(Method.UpdateTrip.descriptor, call, limit: limit) {
            try await service.updateTrip($0, caller: $1)
        }
    }
}
