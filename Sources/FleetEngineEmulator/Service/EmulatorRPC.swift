import FleetEngineAPI
import GRPCCore
import Hummingbird
import SwiftProtobuf

/// A unary RPC as the code generated from the protos declares it: its request and response messages and its
/// descriptor. The conformances below bind each RPC's types to the service method that answers it, so a handler of
/// the wrong type fails the build.
protocol GeneratedUnaryMethod {
    associatedtype Input: SwiftProtobuf.Message & Sendable
    associatedtype Output: SwiftProtobuf.Message & Sendable
    static var descriptor: MethodDescriptor { get }
}

/// One RPC the emulator answers: a generated method and the service method behind it. Both transports serve the
/// same list, ``EmulatorRPCs/all(vehicles:deliveries:)``: gRPC by the method's descriptor, REST by its
/// `google.api.http` rule (``HTTPRules``). Adding an RPC is one entry here and its service method.
protocol EmulatorRPC: Sendable {
    var descriptor: MethodDescriptor { get }
    /// Routes each of the RPC's REST bindings on `router` (``RESTRoutes``).
    func registerREST(on router: Router<EmulatorRequestContext>, pipeline: RPCPipeline, maximumBodySize: Int)
    /// Registers the RPC with a gRPC router (``FleetEngineGRPCService``).
    @available(FleetAuthGRPC, *)
    func registerGRPC<Transport: ServerTransport>(
        on router: inout RPCRouter<Transport>,
        call: GRPCCall,
        maximumMessageSize: Int
    )
}

struct UnaryRPC<Method: GeneratedUnaryMethod>: EmulatorRPC {
    let handler: @Sendable (Method.Input, Principal) async throws -> Method.Output

    init(_ method: Method.Type, _ handler: @escaping @Sendable (Method.Input, Principal) async throws -> Method.Output)
    {
        self.handler = handler
    }

    var descriptor: MethodDescriptor { Method.descriptor }
}

enum EmulatorRPCs {
    typealias Vehicles = FleetEngineV1.VehicleService.Method
    typealias Trips = FleetEngineV1.TripService.Method
    typealias Deliveries = FleetEngineDelivery.DeliveryService.Method

    /// Every RPC of `maps.fleetengine.v1` and `maps.fleetengine.delivery.v1`, each with its service method.
    static func all(vehicles: FleetEngineService, deliveries: DeliveryService) -> [any EmulatorRPC] {
        let empty = Google_Protobuf_Empty()
        return [
            UnaryRPC(Vehicles.CreateVehicle.self) { try await vehicles.createVehicle($0, caller: $1) },
            UnaryRPC(Vehicles.GetVehicle.self) { try await vehicles.getVehicle($0, caller: $1) },
            UnaryRPC(Vehicles.DeleteVehicle.self) {
                try await vehicles.deleteVehicle($0, caller: $1); return empty
            },
            UnaryRPC(Vehicles.UpdateVehicle.self) { try await vehicles.updateVehicle($0, caller: $1) },
            UnaryRPC(Vehicles.UpdateVehicleAttributes.self) {
                try await vehicles.updateVehicleAttributes($0, caller: $1)
            },
            UnaryRPC(Vehicles.ListVehicles.self) { try await vehicles.listVehicles($0, caller: $1) },
            UnaryRPC(Vehicles.SearchVehicles.self) { try await vehicles.searchVehicles($0, caller: $1) },
            UnaryRPC(Trips.CreateTrip.self) { try await vehicles.createTrip($0, caller: $1) },
            UnaryRPC(Trips.GetTrip.self) { try await vehicles.getTrip($0, caller: $1) },
            UnaryRPC(Trips.DeleteTrip.self) {
                try await vehicles.deleteTrip($0, caller: $1); return empty
            },
            UnaryRPC(Trips.ReportBillableTrip.self) {
                try await vehicles.reportBillableTrip($0, caller: $1); return empty
            },
            UnaryRPC(Trips.SearchTrips.self) { try await vehicles.searchTrips($0, caller: $1) },
            UnaryRPC(Trips.UpdateTrip.self) { try await vehicles.updateTrip($0, caller: $1) },
            UnaryRPC(Deliveries.CreateDeliveryVehicle.self) {
                try await deliveries.createDeliveryVehicle($0, caller: $1)
            },
            UnaryRPC(Deliveries.GetDeliveryVehicle.self) { try await deliveries.getDeliveryVehicle($0, caller: $1) },
            UnaryRPC(Deliveries.DeleteDeliveryVehicle.self) {
                try await deliveries.deleteDeliveryVehicle($0, caller: $1)
                return empty
            },
            UnaryRPC(Deliveries.UpdateDeliveryVehicle.self) {
                try await deliveries.updateDeliveryVehicle($0, caller: $1)
            },
            UnaryRPC(Deliveries.ListDeliveryVehicles.self) {
                try await deliveries.listDeliveryVehicles($0, caller: $1)
            },
            UnaryRPC(Deliveries.BatchCreateTasks.self) { try await deliveries.batchCreateTasks($0, caller: $1) },
            UnaryRPC(Deliveries.CreateTask.self) { try await deliveries.createTask($0, caller: $1) },
            UnaryRPC(Deliveries.GetTask.self) { try await deliveries.getTask($0, caller: $1) },
            UnaryRPC(Deliveries.DeleteTask.self) {
                try await deliveries.deleteTask($0, caller: $1); return empty
            },
            UnaryRPC(Deliveries.UpdateTask.self) { try await deliveries.updateTask($0, caller: $1) },
            UnaryRPC(Deliveries.ListTasks.self) { try await deliveries.listTasks($0, caller: $1) },
            UnaryRPC(Deliveries.GetTaskTrackingInfo.self) { try await deliveries.getTaskTrackingInfo($0, caller: $1) },
        ]
    }
}

extension EmulatorRPCs.Vehicles.CreateVehicle: GeneratedUnaryMethod {}
extension EmulatorRPCs.Vehicles.GetVehicle: GeneratedUnaryMethod {}
extension EmulatorRPCs.Vehicles.DeleteVehicle: GeneratedUnaryMethod {}
extension EmulatorRPCs.Vehicles.UpdateVehicle: GeneratedUnaryMethod {}
extension EmulatorRPCs.Vehicles.UpdateVehicleAttributes: GeneratedUnaryMethod {}
extension EmulatorRPCs.Vehicles.ListVehicles: GeneratedUnaryMethod {}
extension EmulatorRPCs.Vehicles.SearchVehicles: GeneratedUnaryMethod {}
extension EmulatorRPCs.Trips.CreateTrip: GeneratedUnaryMethod {}
extension EmulatorRPCs.Trips.GetTrip: GeneratedUnaryMethod {}
extension EmulatorRPCs.Trips.DeleteTrip: GeneratedUnaryMethod {}
extension EmulatorRPCs.Trips.ReportBillableTrip: GeneratedUnaryMethod {}
extension EmulatorRPCs.Trips.SearchTrips: GeneratedUnaryMethod {}
extension EmulatorRPCs.Trips.UpdateTrip: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.CreateDeliveryVehicle: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.GetDeliveryVehicle: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.DeleteDeliveryVehicle: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.UpdateDeliveryVehicle: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.ListDeliveryVehicles: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.BatchCreateTasks: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.CreateTask: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.GetTask: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.DeleteTask: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.UpdateTask: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.ListTasks: GeneratedUnaryMethod {}
extension EmulatorRPCs.Deliveries.GetTaskTrackingInfo: GeneratedUnaryMethod {}
