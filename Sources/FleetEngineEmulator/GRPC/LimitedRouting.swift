import GRPCCore
import GRPCProtobuf
import SwiftProtobuf

/// Unary methods registered with a size check on each request message.
///
/// grpc-swift's HTTP/2 transport answers a message over its own limit by resetting the stream (`CANCEL`), which a
/// client sees as `UNAVAILABLE`; Google's servers answer `RESOURCE_EXHAUSTED`. So the transport's limit is set
/// above the emulator's (see ``GRPCServerService``), and each method's deserializer refuses a message over the
/// emulator's limit with `RESOURCE_EXHAUSTED` before parsing it: nothing is authenticated, read or written.
@available(FleetAuthGRPC, *)
extension RPCRouter {
    mutating func registerUnary<Input: SwiftProtobuf.Message, Output: SwiftProtobuf.Message>(
        _ method: MethodDescriptor,
        limit: Int,
        _ handler: @escaping @Sendable (ServerRequest<Input>, ServerContext) async throws -> ServerResponse<Output>
    ) {
        registerHandler(
            forMethod: method,
            deserializer: LimitedProtobufDeserializer<Input>(limit: limit),
            serializer: ProtobufSerializer<Output>()
        ) { request, context in
            StreamingServerResponse(single: try await handler(try await ServerRequest(stream: request), context))
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
