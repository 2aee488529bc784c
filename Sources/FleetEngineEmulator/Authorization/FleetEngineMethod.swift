public import FleetAuthCore
public import FleetEngineAPI

/// A Fleet Engine RPC and the IAM permission it needs (<doc:AuthorizationModel>).
///
/// The RPC is named by the code generated from the protos (`FleetEngineV1.VehicleServiceRPCs.GetVehicle.rpc`), never by
/// a string of our own: an RPC renamed or removed in the protos fails the build here.
public struct FleetEngineMethod: Sendable, Hashable, CustomStringConvertible {
    /// The RPC: its service and method, as generated from the protos.
    public let rpc: RPCMethod
    /// The permission the signing account's role must grant.
    public let permission: FleetEnginePermission

    /// The RPC's name, such as `UpdateVehicle`.
    public var name: String { rpc.method }
    public var description: String { name }

    public init(_ rpc: RPCMethod, permission: FleetEnginePermission) {
        self.rpc = rpc
        self.permission = permission
    }

    typealias Vehicles = FleetEngineV1.VehicleServiceRPCs
    typealias Trips = FleetEngineV1.TripServiceRPCs
    typealias Deliveries = FleetEngineDelivery.DeliveryServiceRPCs

    /// Every entry of the permission table, both APIs, each API's list in its own folder
    /// (`OnDemand/OnDemandPermissions.swift`, `Deliveries/DeliveryPermissions.swift`): a test checks that each RPC the
    /// generated services declare has at least one.
    public static let all: [FleetEngineMethod] = onDemand + deliveries
}
