// Hand-written (not generated): what the generated `visitUnaryMethods(of:_:)` functions (UnaryMethods.swift) call.

import GRPCCore
import SwiftProtobuf

/// Receives the unary RPCs of a service's implementation (its generated `Implementation` protocol), one by one, with
/// their request and response types.
///
/// Each transport is such a visitor: it serves every RPC it is handed, gRPC by the method's descriptor, REST by its
/// `google.api.http` rule. An RPC added to the proto is visited as soon as it is implemented, which the conformance
/// to `Implementation` makes the compiler demand.
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public protocol UnaryMethodVisitor<Caller> {
    /// Who makes a call, as the implementation receives it.
    associatedtype Caller

    /// One unary RPC: its generated namespace (`Maps_Fleetengine_V1_VehicleService.Method.GetVehicle`, which names
    /// its descriptor, `Input` and `Output`) and the implementation's function for it.
    mutating func visit<Method: UnaryMethod>(
        _ method: Method.Type,
        _ handler: @escaping @Sendable (Method.Input, Caller) async throws -> Method.Output
    )
}

/// A unary method's namespace as grpc-swift generates it (`….Method.GetVehicle`): its descriptor and its messages.
/// The generated `visitUnaryMethods(of:_:)` functions conform every unary method they visit.
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public protocol UnaryMethod {
    associatedtype Input: SwiftProtobuf.Message & Sendable
    associatedtype Output: SwiftProtobuf.Message & Sendable
    static var descriptor: MethodDescriptor { get }
}
