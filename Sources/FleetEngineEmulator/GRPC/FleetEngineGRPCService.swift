import GRPCCore

/// Fleet Engine's three gRPC services (`maps.fleetengine.v1.VehicleService`, `…TripService` and
/// `maps.fleetengine.delivery.v1.DeliveryService`): every RPC of ``EmulatorRPCs``, each answered by the same
/// service method as over REST.
@available(FleetAuthGRPC, *)
struct FleetEngineGRPCService: RegistrableRPCService {
    let rpcs: [any EmulatorRPC]
    let call: GRPCCall
    /// The largest request message accepted (larger is `RESOURCE_EXHAUSTED`).
    let maximumMessageSize: Int

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        for rpc in rpcs { rpc.registerGRPC(on: &router, call: call, maximumMessageSize: maximumMessageSize) }
    }
}

@available(FleetAuthGRPC, *)
extension UnaryRPC {
    /// Registers the method: it authenticates, then reads its message (size-checked by
    /// ``LimitedProtobufDeserializer``).
    func registerGRPC<Transport: ServerTransport>(
        on router: inout RPCRouter<Transport>,
        call: GRPCCall,
        maximumMessageSize: Int
    ) {
        router.registerUnary(Method.descriptor, call, limit: maximumMessageSize, handler)
    }
}
