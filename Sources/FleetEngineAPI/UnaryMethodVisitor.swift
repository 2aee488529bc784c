// Hand-written (not generated): what the generated `visitUnaryMethods(_:)` extensions (UnaryMethods.swift) call.

import GRPCCore
import SwiftProtobuf

/// Receives the unary methods of a gRPC service implementation, one by one, with their request and response types.
///
/// grpc-swift's generated `registerMethods(with:)` can register a service's methods with a gRPC router only. The
/// generated `visitUnaryMethods(_:)` of every service's `StreamingServiceProtocol` hands each method to a visitor
/// instead, so one conformance can also be served by another transport (REST, from the methods' `google.api.http`
/// rules), or registered with other message limits. A method added to the proto is visited as soon as its
/// implementation exists, which the conformance makes the compiler demand.
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public protocol UnaryMethodVisitor {
    /// One unary method: its generated namespace (`Maps_Fleetengine_V1_VehicleService.Method.GetVehicle`, which
    /// names its descriptor, `Input` and `Output`) and the implementation's handler.
    mutating func visit<Method: UnaryMethod>(
        _ method: Method.Type,
        _ handler:
            @escaping @Sendable (StreamingServerRequest<Method.Input>, ServerContext) async throws ->
            StreamingServerResponse<Method.Output>
    )
}

/// A unary method's namespace as grpc-swift generates it (`….Method.GetVehicle`): its descriptor and its messages.
/// The generated `visitUnaryMethods(_:)` extensions conform every unary method they visit.
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public protocol UnaryMethod {
    associatedtype Input: SwiftProtobuf.Message & Sendable
    associatedtype Output: SwiftProtobuf.Message & Sendable
    static var descriptor: MethodDescriptor { get }
}
