import GRPCCore
import GRPCProtobuf
import SwiftProtobuf

/// Unary methods registered so that the caller is authenticated before its request message is decoded, and each
/// message is size-checked before it is parsed.
///
/// grpc-swift decodes a request message only when the handler reads it, so ``GRPCCall/run(_:_:_:)`` verifies the
/// `authorization` metadata first: an unauthenticated call's message is never parsed.
///
/// grpc-swift's HTTP/2 transport answers a message over its own limit by resetting the stream (`CANCEL`), which a
/// client sees as `UNAVAILABLE`; Google's servers answer `RESOURCE_EXHAUSTED`. So the transport's limit is set
/// above the emulator's (see ``GRPCServerService``), and each method's deserializer refuses a message over the
/// emulator's limit with `RESOURCE_EXHAUSTED` before parsing it: nothing is read or written.
@available(FleetAuthGRPC, *)
extension RPCRouter {
    mutating func registerUnary<Input: SwiftProtobuf.Message, Output: SwiftProtobuf.Message>(
        _ method: MethodDescriptor,
        _ call: GRPCCall,
        limit: Int,
        _ body: @escaping @Sendable (Input, Principal) async throws -> Output
    ) {
        registerHandler(
            forMethod: method,
            deserializer: LimitedProtobufDeserializer<Input>(limit: limit),
            serializer: ProtobufSerializer<Output>()
        ) { request, _ in
            StreamingServerResponse(single: try await call.run(method, request, body))
        }
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
