import FleetEngineAPI
import GRPCCore
import SwiftProtobuf

/// `maps.fleetengine.v1.TripService` over gRPC: each method is ``FleetEngineService``'s, as over REST.
@available(FleetAuthGRPC, *)
struct TripServiceHandler: FleetEngineV1.TripService.ServiceProtocol {
    let call: GRPCCall
    /// The largest request message accepted (larger is `RESOURCE_EXHAUSTED`).
    let maximumMessageSize: Int
    var service: FleetEngineService { call.service }

    /// The methods, each with the message size check of ``LimitedProtobufDeserializer``.
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        typealias Method = FleetEngineV1.TripService.Method
        let limit = maximumMessageSize
        router.registerUnary(Method.CreateTrip.descriptor, limit: limit) {
            try await createTrip(request: $0, context: $1)
        }
        router.registerUnary(Method.GetTrip.descriptor, limit: limit) { try await getTrip(request: $0, context: $1) }
        router.registerUnary(Method.DeleteTrip.descriptor, limit: limit) {
            try await deleteTrip(request: $0, context: $1)
        }
        router.registerUnary(Method.ReportBillableTrip.descriptor, limit: limit) {
            try await reportBillableTrip(request: $0, context: $1)
        }
        router.registerUnary(Method.SearchTrips.descriptor, limit: limit) {
            try await searchTrips(request: $0, context: $1)
        }
        router.registerUnary(Method.UpdateTrip.descriptor, limit: limit) {
            try await updateTrip(request: $0, context: $1)
        }
    }

    func createTrip(
        request: ServerRequest<FleetEngineV1.CreateTripRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.Trip> {
        try await call.run("TripService/CreateTrip", request) { try await service.createTrip($0, caller: $1) }
    }

    func getTrip(
        request: ServerRequest<FleetEngineV1.GetTripRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.Trip> {
        try await call.run("TripService/GetTrip", request) { try await service.getTrip($0, caller: $1) }
    }

    func deleteTrip(
        request: ServerRequest<FleetEngineV1.DeleteTripRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<Google_Protobuf_Empty> {
        try await call.run("TripService/DeleteTrip", request) {
            try await service.deleteTrip($0, caller: $1)
            return Google_Protobuf_Empty()
        }
    }

    func reportBillableTrip(
        request: ServerRequest<FleetEngineV1.ReportBillableTripRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<Google_Protobuf_Empty> {
        try await call.run("TripService/ReportBillableTrip", request) {
            try await service.reportBillableTrip($0, caller: $1)
            return Google_Protobuf_Empty()
        }
    }

    func searchTrips(
        request: ServerRequest<FleetEngineV1.SearchTripsRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.SearchTripsResponse> {
        try await call.run("TripService/SearchTrips", request) { try await service.searchTrips($0, caller: $1) }
    }

    func updateTrip(
        request: ServerRequest<FleetEngineV1.UpdateTripRequest>,
        context: ServerContext
    ) async throws -> ServerResponse<FleetEngineV1.Trip> {
        try await call.run("TripService/UpdateTrip", request) { try await service.updateTrip($0, caller: $1) }
    }
}
