import FleetEngineAPI
import GRPCCore
import GRPCProtobuf
import SwiftProtobuf

/// Unary methods registered so that the caller is authenticated before its request message is decoded, and each
/// message is size-checked before it is parsed.
///
/// grpc-swift decodes a request message only when the handler reads it, so ``RPCCall`` verifies the `authorization`
/// metadata first: an unauthenticated call's message is never parsed.
///
/// grpc-swift's HTTP/2 transport answers a message over its own limit by resetting the stream (`CANCEL`), which a
/// client sees as `UNAVAILABLE`; Google's servers answer `RESOURCE_EXHAUSTED`. So the transport's limit is set
/// above the emulator's (see ``GRPCServerService``), and each method's deserializer refuses a message over the
/// emulator's limit with `RESOURCE_EXHAUSTED` before parsing it: nothing is read or written. (The generated
/// `registerMethods(with:)` would register the same handlers with an unlimited deserializer.)
@available(FleetAuthGRPC, *)
extension RPCRouter {
    /// Registers every unary method that `visit` hands to its visitor (a generated `visitUnaryMethods(_:)`).
    mutating func registerUnaryMethods(limit: Int, _ visit: (inout LimitedRegistration<Transport>) -> Void) {
        var registration = LimitedRegistration(router: self, limit: limit)
        visit(&registration)
        self = registration.router
    }
}

/// Registers each unary method it visits with a gRPC router, its messages size-checked.
@available(FleetAuthGRPC, *)
struct LimitedRegistration<Transport: ServerTransport>: UnaryMethodVisitor {
    var router: RPCRouter<Transport>
    let limit: Int

    mutating func visit<Method: UnaryMethod>(
        _ method: Method.Type,
        _ handler:
            @escaping @Sendable (StreamingServerRequest<Method.Input>, ServerContext) async throws ->
            StreamingServerResponse<Method.Output>
    ) {
        router.registerHandler(
            forMethod: Method.descriptor,
            deserializer: LimitedProtobufDeserializer<Method.Input>(limit: limit),
            serializer: ProtobufSerializer<Method.Output>(),
            handler: handler
        )
    }
}

/// Protobuf's deserializer behind a size check.
@available(FleetAuthGRPC, *)
struct LimitedProtobufDeserializer<Message: SwiftProtobuf.Message>: MessageDeserializer {
    let limit: Int

    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        guard serializedMessageBytes.count <= limit else {
            throw RPCError(
                code: .resourceExhausted,
                message: "The request message is \(serializedMessageBytes.count) bytes; the limit is \(limit)."
            )
        }
        return try ProtobufDeserializer<Message>().deserialize(serializedMessageBytes)
    }
}
