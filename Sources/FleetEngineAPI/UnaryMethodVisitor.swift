// Hand-written (not generated): what the generated `visitUnaryMethods(of:_:)` functions (UnaryMethods.swift) call.
// Nothing here uses gRPC, whose Swift APIs need macOS 15 / iOS 18: a REST-only server built on it runs wherever
// SwiftProtobuf does.

import SwiftProtobuf

/// Receives the unary RPCs of a service's implementation (its generated `Implementation` protocol), one by one, with
/// their request and response types.
///
/// Each transport is such a visitor: it serves every RPC it is handed, gRPC by the RPC's name, REST by its
/// `google.api.http` rule. An RPC added to the proto is visited as soon as it is implemented, which the conformance
/// to `Implementation` makes the compiler demand.
public protocol UnaryMethodVisitor<Caller> {
    /// Who makes a call, as the implementation receives it.
    associatedtype Caller

    /// One unary RPC: its generated namespace (`Maps_Fleetengine_V1_VehicleServiceRPCs.GetVehicle`, which names the
    /// RPC, its `Input` and its `Output`) and the implementation's function for it.
    mutating func visit<Method: UnaryMethod>(
        _ method: Method.Type,
        _ handler: @escaping @Sendable (Method.Input, Caller) async throws -> Method.Output
    )
}

/// A unary RPC as the generated code declares it (`Maps_Fleetengine_V1_VehicleServiceRPCs.GetVehicle`): its name and
/// its messages.
public protocol UnaryMethod {
    associatedtype Input: SwiftProtobuf.Message & Sendable
    associatedtype Output: SwiftProtobuf.Message & Sendable
    static var rpc: RPCMethod { get }
}

/// An RPC's name as its proto declares it: the service's fully qualified name and the method's. gRPC calls it by
/// `service/method`; permissions, metrics and the REST rules are keyed by it.
public struct RPCMethod: Sendable, Hashable, CustomStringConvertible {
    /// The service's fully qualified name, such as `maps.fleetengine.v1.VehicleService`.
    public let service: String
    /// The method's name, such as `GetVehicle`.
    public let method: String
    /// `service/method`, as gRPC names the call: `maps.fleetengine.v1.VehicleService/GetVehicle`.
    public let fullName: String

    public init(service: String, method: String) {
        self.service = service
        self.method = method
        self.fullName = service + "/" + method
    }

    public var description: String { fullName }
}
