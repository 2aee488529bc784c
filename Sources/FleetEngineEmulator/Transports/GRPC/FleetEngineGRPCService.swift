import FleetAuthServerCore
import FleetEngineAPI
import GRPCCore
import GRPCProtobuf
import SwiftProtobuf

/// Every RPC of both APIs (``FleetEngineRPCs``) as one gRPC service, each registered so that the caller is
/// authenticated before its request message is decoded, and each message is size-checked before it is parsed.
///
/// grpc-swift decodes a request message only when the handler reads it, so ``RPCCall`` verifies the `authorization`
/// metadata first: an unauthenticated call's message is never parsed.
///
/// grpc-swift's HTTP/2 transport answers a message over its own limit by resetting the stream (`CANCEL`), which a
/// client sees as `UNAVAILABLE`; Google's servers answer `RESOURCE_EXHAUSTED`. So the transport's limit is set
/// above the emulator's (see ``GRPCServerService``), and each method's deserializer refuses a message over the
/// emulator's limit with `RESOURCE_EXHAUSTED` before parsing it: nothing is read or written.
@available(FleetAuthGRPC, *)
struct FleetEngineGRPCService: RegistrableRPCService {
    let rpcs: FleetEngineRPCs
    let call: RPCCall

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        var registration = LimitedRegistration(router: router, call: call)
        rpcs.visitUnaryMethods(&registration)
        router = registration.router
    }
}

/// Registers each RPC it visits with a gRPC router, its request message size-checked, each call passed through
/// ``RPCCall``.
@available(FleetAuthGRPC, *)
struct LimitedRegistration<Transport: ServerTransport>: UnaryMethodVisitor {
    typealias Caller = Principal

    var router: RPCRouter<Transport>
    let call: RPCCall

    mutating func visit<Method: UnaryMethod>(
        _ method: Method.Type,
        _ handler: @escaping @Sendable (Method.Input, Principal) async throws -> Method.Output
    ) {
        let call = call
        router.registerHandler(
            forMethod: MethodDescriptor(fullyQualifiedService: Method.rpc.service, method: Method.rpc.method),
            deserializer: LimitedProtobufDeserializer<Method.Input>(limit: call.maximumMessageSize),
            serializer: ProtobufSerializer<Method.Output>(),
            handler: { request, context in try await call.unary(request, context, handler) }
        )
    }
}

/// Protobuf's deserializer behind a size check, which drops unknown fields at every depth: what a request carries
/// beyond the contract is never stored, so it can never be served back (to every rider of a trip, say).
@available(FleetAuthGRPC, *)
struct LimitedProtobufDeserializer<Message: SwiftProtobuf.Message>: MessageDeserializer {
    let limit: Int

    static var options: BinaryDecodingOptions {
        var options = BinaryDecodingOptions()
        options.discardUnknownFields = true
        return options
    }

    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        guard serializedMessageBytes.count <= limit else {
            throw RPCError(
                code: .resourceExhausted,
                message: "The request message is \(serializedMessageBytes.count) bytes; the limit is \(limit)."
            )
        }
        do {
            return try serializedMessageBytes.withUnsafeBytes { bytes in
                try Message(serializedBytes: [UInt8](bytes), options: Self.options)
            }
        } catch {
            throw RPCError(
                code: .invalidArgument,
                message: "The request message is not a \(Message.protoMessageName) in the protobuf wire format.",
                cause: error
            )
        }
    }
}
