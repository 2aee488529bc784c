import FleetEngineAPI
import GRPCCore
import SwiftProtobuf

/// Fleet Engine's three services as the code generated from their protos declares them: each conforms to its
/// generated `StreamingServiceProtocol`, so the compiler demands an implementation of every RPC the protos declare.
/// Each RPC's implementation is one line: the call passes through ``RPCCall`` (the ``RPCPipeline`` both transports
/// share) to the service method that answers it.
///
/// The same three values serve both transports: gRPC registers them (``registerMethods(with:)`` of each, which limits
/// the request message's size), and REST routes each RPC they visit by its `google.api.http` rule (``RESTRoutes``).
/// So adding an RPC is its declaration in the proto, its implementation here, and its permission
/// (``FleetEngineMethod``).
@available(FleetAuthGRPC, *)
struct FleetEngineRPCs: Sendable {
    let vehicles: VehicleRPCs
    let trips: TripRPCs
    let deliveries: DeliveryRPCs
    /// The pipeline and limits all three share.
    let call: RPCCall

    init(vehicles: FleetEngineService, deliveries: DeliveryService, call: RPCCall) {
        self.call = call
        self.vehicles = VehicleRPCs(service: vehicles, call: call)
        trips = TripRPCs(service: vehicles, call: call)
        self.deliveries = DeliveryRPCs(service: deliveries, call: call)
    }

    /// Hands every RPC of the three services to `visitor`.
    func visitUnaryMethods(_ visitor: inout some UnaryMethodVisitor) {
        vehicles.visitUnaryMethods(&visitor)
        trips.visitUnaryMethods(&visitor)
        deliveries.visitUnaryMethods(&visitor)
    }

    /// The services, for a gRPC server.
    var services: [any RegistrableRPCService] { [vehicles, trips, deliveries] }
}

@available(FleetAuthGRPC, *)
typealias RPCRequest<Method: UnaryMethod> = StreamingServerRequest<Method.Input>
@available(FleetAuthGRPC, *)
typealias RPCResponse<Method: UnaryMethod> = StreamingServerResponse<Method.Output>

/// `maps.fleetengine.v1.VehicleService`, answered by ``FleetEngineService``.
@available(FleetAuthGRPC, *)
struct VehicleRPCs: FleetEngineV1.VehicleService.StreamingServiceProtocol {
    typealias M = FleetEngineV1.VehicleService.Method
    let service: FleetEngineService
    let call: RPCCall

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerUnaryMethods(limit: call.maximumMessageSize) { visitUnaryMethods(&$0) }
    }

    func createVehicle(request: RPCRequest<M.CreateVehicle>, context: ServerContext) async throws
        -> RPCResponse<M.CreateVehicle>
    { try await call.unary(request, context, service.createVehicle) }

    func getVehicle(request: RPCRequest<M.GetVehicle>, context: ServerContext) async throws
        -> RPCResponse<M.GetVehicle>
    { try await call.unary(request, context, service.getVehicle) }

    func deleteVehicle(request: RPCRequest<M.DeleteVehicle>, context: ServerContext) async throws
        -> RPCResponse<M.DeleteVehicle>
    { try await call.unary(request, context, answeringEmpty: service.deleteVehicle) }

    func updateVehicle(request: RPCRequest<M.UpdateVehicle>, context: ServerContext) async throws
        -> RPCResponse<M.UpdateVehicle>
    { try await call.unary(request, context, service.updateVehicle) }

    func updateVehicleAttributes(request: RPCRequest<M.UpdateVehicleAttributes>, context: ServerContext) async throws
        -> RPCResponse<M.UpdateVehicleAttributes>
    { try await call.unary(request, context, service.updateVehicleAttributes) }

    func listVehicles(request: RPCRequest<M.ListVehicles>, context: ServerContext) async throws
        -> RPCResponse<M.ListVehicles>
    { try await call.unary(request, context, service.listVehicles) }

    func searchVehicles(request: RPCRequest<M.SearchVehicles>, context: ServerContext) async throws
        -> RPCResponse<M.SearchVehicles>
    { try await call.unary(request, context, service.searchVehicles) }
}

/// `maps.fleetengine.v1.TripService`, answered by ``FleetEngineService``.
@available(FleetAuthGRPC, *)
struct TripRPCs: FleetEngineV1.TripService.StreamingServiceProtocol {
    typealias M = FleetEngineV1.TripService.Method
    let service: FleetEngineService
    let call: RPCCall

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerUnaryMethods(limit: call.maximumMessageSize) { visitUnaryMethods(&$0) }
    }

    func createTrip(request: RPCRequest<M.CreateTrip>, context: ServerContext) async throws
        -> RPCResponse<M.CreateTrip>
    { try await call.unary(request, context, service.createTrip) }

    func getTrip(request: RPCRequest<M.GetTrip>, context: ServerContext) async throws -> RPCResponse<M.GetTrip> {
        try await call.unary(request, context, service.getTrip)
    }

    func deleteTrip(request: RPCRequest<M.DeleteTrip>, context: ServerContext) async throws
        -> RPCResponse<M.DeleteTrip>
    { try await call.unary(request, context, answeringEmpty: service.deleteTrip) }

    func reportBillableTrip(request: RPCRequest<M.ReportBillableTrip>, context: ServerContext) async throws
        -> RPCResponse<M.ReportBillableTrip>
    { try await call.unary(request, context, answeringEmpty: service.reportBillableTrip) }

    func searchTrips(request: RPCRequest<M.SearchTrips>, context: ServerContext) async throws
        -> RPCResponse<M.SearchTrips>
    { try await call.unary(request, context, service.searchTrips) }

    func updateTrip(request: RPCRequest<M.UpdateTrip>, context: ServerContext) async throws
        -> RPCResponse<M.UpdateTrip>
    { try await call.unary(request, context, service.updateTrip) }
}

/// `maps.fleetengine.delivery.v1.DeliveryService`, answered by ``DeliveryService``.
@available(FleetAuthGRPC, *)
struct DeliveryRPCs: FleetEngineDelivery.DeliveryService.StreamingServiceProtocol {
    typealias M = FleetEngineDelivery.DeliveryService.Method
    let service: DeliveryService
    let call: RPCCall

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerUnaryMethods(limit: call.maximumMessageSize) { visitUnaryMethods(&$0) }
    }

    func createDeliveryVehicle(request: RPCRequest<M.CreateDeliveryVehicle>, context: ServerContext) async throws
        -> RPCResponse<M.CreateDeliveryVehicle>
    { try await call.unary(request, context, service.createDeliveryVehicle) }

    func getDeliveryVehicle(request: RPCRequest<M.GetDeliveryVehicle>, context: ServerContext) async throws
        -> RPCResponse<M.GetDeliveryVehicle>
    { try await call.unary(request, context, service.getDeliveryVehicle) }

    func deleteDeliveryVehicle(request: RPCRequest<M.DeleteDeliveryVehicle>, context: ServerContext) async throws
        -> RPCResponse<M.DeleteDeliveryVehicle>
    { try await call.unary(request, context, answeringEmpty: service.deleteDeliveryVehicle) }

    func updateDeliveryVehicle(request: RPCRequest<M.UpdateDeliveryVehicle>, context: ServerContext) async throws
        -> RPCResponse<M.UpdateDeliveryVehicle>
    { try await call.unary(request, context, service.updateDeliveryVehicle) }

    func batchCreateTasks(request: RPCRequest<M.BatchCreateTasks>, context: ServerContext) async throws
        -> RPCResponse<M.BatchCreateTasks>
    { try await call.unary(request, context, service.batchCreateTasks) }

    func createTask(request: RPCRequest<M.CreateTask>, context: ServerContext) async throws
        -> RPCResponse<M.CreateTask>
    { try await call.unary(request, context, service.createTask) }

    func getTask(request: RPCRequest<M.GetTask>, context: ServerContext) async throws -> RPCResponse<M.GetTask> {
        try await call.unary(request, context, service.getTask)
    }

    func deleteTask(request: RPCRequest<M.DeleteTask>, context: ServerContext) async throws
        -> RPCResponse<M.DeleteTask>
    { try await call.unary(request, context, answeringEmpty: service.deleteTask) }

    func updateTask(request: RPCRequest<M.UpdateTask>, context: ServerContext) async throws
        -> RPCResponse<M.UpdateTask>
    { try await call.unary(request, context, service.updateTask) }

    func listTasks(request: RPCRequest<M.ListTasks>, context: ServerContext) async throws
        -> RPCResponse<M.ListTasks>
    { try await call.unary(request, context, service.listTasks) }

    func getTaskTrackingInfo(request: RPCRequest<M.GetTaskTrackingInfo>, context: ServerContext) async throws
        -> RPCResponse<M.GetTaskTrackingInfo>
    { try await call.unary(request, context, service.getTaskTrackingInfo) }

    func listDeliveryVehicles(request: RPCRequest<M.ListDeliveryVehicles>, context: ServerContext) async throws
        -> RPCResponse<M.ListDeliveryVehicles>
    { try await call.unary(request, context, service.listDeliveryVehicles) }
}
