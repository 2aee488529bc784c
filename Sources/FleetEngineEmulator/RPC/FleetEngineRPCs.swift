import FleetAuthServerCore
public import FleetEngineAPI
import SwiftProtobuf

/// Every RPC of Fleet Engine's two APIs, each answered by its one implementation, whichever transport brings it.
///
/// The services conform to the `Implementation` protocols generated from the protos (``OnDemandService`` to
/// `VehicleService`'s and `TripService`'s, ``DeliveryService`` to `DeliveryService`'s), so the compiler demands a
/// method for every RPC the protos declare. Each transport visits them and serves every RPC it is handed through
/// ``RPCPipeline``: REST routes it by its `google.api.http` rule (``RESTRoutes``), gRPC registers it by its name
/// (``FleetEngineGRPCService``). So adding an RPC is its declaration in the proto, its method in the service, and its
/// permission (``FleetEngineMethod``).
struct FleetEngineRPCs: Sendable {
    let vehicles: OnDemandService
    let deliveries: DeliveryService

    /// Hands every RPC of both APIs to `visitor`.
    func visitUnaryMethods(_ visitor: inout some UnaryMethodVisitor<Principal>) {
        FleetEngineV1.VehicleServiceRPCs.visitUnaryMethods(of: vehicles, &visitor)
        FleetEngineV1.TripServiceRPCs.visitUnaryMethods(of: vehicles, &visitor)
        FleetEngineDelivery.DeliveryServiceRPCs.visitUnaryMethods(of: deliveries, &visitor)
    }
}

extension OnDemandService: FleetEngineV1.VehicleServiceRPCs.Implementation {}

extension OnDemandService: FleetEngineV1.TripServiceRPCs.Implementation {}

extension DeliveryService: FleetEngineDelivery.DeliveryServiceRPCs.Implementation {}

extension FleetEngineRPCs {
    /// The request and response message types of every RPC, by full proto name (the request log reads its stored
    /// messages back with them).
    var messageTypes: [String: any SwiftProtobuf.Message.Type] {
        var collector = MessageTypes()
        visitUnaryMethods(&collector)
        return collector.types
    }

    private struct MessageTypes: UnaryMethodVisitor {
        typealias Caller = Principal
        var types: [String: any SwiftProtobuf.Message.Type] = [:]

        mutating func visit<Method: UnaryMethod>(
            _ method: Method.Type,
            _ handler: @escaping @Sendable (Method.Input, Principal) async throws -> Method.Output
        ) {
            types[Method.Input.protoMessageName] = Method.Input.self
            types[Method.Output.protoMessageName] = Method.Output.self
        }
    }
}
