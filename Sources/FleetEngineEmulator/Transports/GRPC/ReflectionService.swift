import FleetEngineAPI
import Foundation
import GRPCCore
import SwiftProtobuf

/// The served `.proto` files, indexed for reflection: by file name and by every fully qualified symbol each declares
/// (packages' services, methods, messages, nested messages, enums and their values).
struct ProtoFileIndex: Sendable {
    /// Each file's serialized `FileDescriptorProto`, by name.
    let files: [String: Data]
    /// Each file's imports, by name.
    let imports: [String: [String]]
    /// The file declaring each symbol.
    let symbols: [String: String]

    /// The index of ``ProtoFileDescriptors``, built once.
    static let generated: ProtoFileIndex = {
        guard
            let data = Data(
                base64Encoded: ProtoFileDescriptors.base64FileDescriptorSet,
                options: .ignoreUnknownCharacters
            ),
            let set = try? Google_Protobuf_FileDescriptorSet(serializedBytes: data)
        else { preconditionFailure("ProtoFileDescriptors is not a FileDescriptorSet: regenerate it") }
        return ProtoFileIndex(set)
    }()

    init(_ set: Google_Protobuf_FileDescriptorSet) {
        var files: [String: Data] = [:]
        var imports: [String: [String]] = [:]
        var symbols: [String: String] = [:]
        for file in set.file {
            files[file.name] = (try? file.serializedBytes()) ?? Data()
            imports[file.name] = file.dependency
            let prefix = file.package.isEmpty ? "" : file.package + "."
            for service in file.service {
                symbols[prefix + service.name] = file.name
                for method in service.method { symbols[prefix + service.name + "." + method.name] = file.name }
            }
            func add(_ message: Google_Protobuf_DescriptorProto, in scope: String) {
                let name = scope + message.name
                symbols[name] = file.name
                for nested in message.nestedType { add(nested, in: name + ".") }
                for enumeration in message.enumType { symbols[name + "." + enumeration.name] = file.name }
            }
            for message in file.messageType { add(message, in: prefix) }
            for enumeration in file.enumType {
                symbols[prefix + enumeration.name] = file.name
                for value in enumeration.value { symbols[prefix + value.name] = file.name }
            }
        }
        self.files = files
        self.imports = imports
        self.symbols = symbols
    }

    /// `name` and every file it imports, directly or not, each once and `name` first; skipping those in `sent`
    /// (a stream need not send a file twice), which it updates.
    func closure(of name: String, skipping sent: inout Set<String>) -> [Data] {
        var result: [Data] = []
        var pending = [name]
        while let next = pending.first {
            pending.removeFirst()
            guard !sent.contains(next), let bytes = files[next] else { continue }
            sent.insert(next)
            result.append(bytes)
            pending += imports[next] ?? []
        }
        return result
    }
}

/// gRPC server reflection, `grpc.reflection.v1.ServerReflection` (and `v1alpha`, whose messages are the same on the
/// wire): the services the port offers and the descriptors of their files, so grpcurl, Postman and grpcui can call
/// them without the `.proto` files.
@available(FleetAuthGRPC, *)
struct ReflectionService: Grpc_Reflection_V1_ServerReflection.SimpleServiceProtocol {
    /// The fully qualified names of the services offered, sorted.
    let services: [String]
    let index: ProtoFileIndex

    init(services: [String], index: ProtoFileIndex = .generated) {
        self.services = services.sorted()
        self.index = index
    }

    func serverReflectionInfo(
        request: RPCAsyncSequence<Grpc_Reflection_V1_ServerReflectionRequest, any Error>,
        response: RPCWriter<Grpc_Reflection_V1_ServerReflectionResponse>,
        context: ServerContext
    ) async throws {
        var sent = Set<String>()
        for try await question in request {
            try await response.write(answer(question, sent: &sent))
        }
    }

    /// The answer to one question of a stream; `sent`: the files already sent on it.
    func answer(
        _ question: Grpc_Reflection_V1_ServerReflectionRequest,
        sent: inout Set<String>
    ) -> Grpc_Reflection_V1_ServerReflectionResponse {
        var answer = Grpc_Reflection_V1_ServerReflectionResponse()
        answer.validHost = question.host
        answer.originalRequest = question
        func notFound(_ message: String) {
            var error = Grpc_Reflection_V1_ErrorResponse()
            error.errorCode = Int32(RPCError.Code.notFound.rawValue)
            error.errorMessage = message
            answer.errorResponse = error
        }
        func files(_ name: String) {
            var files = Grpc_Reflection_V1_FileDescriptorResponse()
            files.fileDescriptorProto = index.closure(of: name, skipping: &sent)
            answer.fileDescriptorResponse = files
        }
        switch question.messageRequest {
        case .listServices:
            var list = Grpc_Reflection_V1_ListServiceResponse()
            list.service = services.map { name in
                var service = Grpc_Reflection_V1_ServiceResponse()
                service.name = name
                return service
            }
            answer.listServicesResponse = list
        case .fileByFilename(let name):
            if index.files[name] != nil { files(name) } else { notFound("No file \(name) on this server.") }
        case .fileContainingSymbol(let symbol):
            // A symbol may be asked with a leading dot, as descriptors write type names.
            let symbol = symbol.hasPrefix(".") ? String(symbol.dropFirst()) : symbol
            if let name = index.symbols[symbol] { files(name) } else { notFound("No symbol \(symbol) on this server.") }
        case .fileContainingExtension(let request):
            notFound("No extension \(request.extensionNumber) of \(request.containingType) on this server.")
        case .allExtensionNumbersOfType(let type):
            if index.symbols[type] != nil {
                var numbers = Grpc_Reflection_V1_ExtensionNumberResponse()
                numbers.baseTypeName = type
                answer.allExtensionNumbersResponse = numbers
            } else {
                notFound("No type \(type) on this server.")
            }
        case nil:
            var error = Grpc_Reflection_V1_ErrorResponse()
            error.errorCode = Int32(RPCError.Code.invalidArgument.rawValue)
            error.errorMessage = "The request asks nothing: set one of the message_request fields."
            answer.errorResponse = error
        }
        return answer
    }
}

/// The same service under its older name, `grpc.reflection.v1alpha` (grpcurl before 1.8.8 and many tools still
/// ask it): its messages are v1's, field for field, so each is converted through its bytes.
@available(FleetAuthGRPC, *)
struct ReflectionServiceV1Alpha: Grpc_Reflection_V1alpha_ServerReflection.SimpleServiceProtocol {
    let reflection: ReflectionService

    func serverReflectionInfo(
        request: RPCAsyncSequence<Grpc_Reflection_V1alpha_ServerReflectionRequest, any Error>,
        response: RPCWriter<Grpc_Reflection_V1alpha_ServerReflectionResponse>,
        context: ServerContext
    ) async throws {
        var sent = Set<String>()
        for try await question in request {
            let v1 = try Grpc_Reflection_V1_ServerReflectionRequest(
                serializedBytes: try question.serializedBytes() as [UInt8]
            )
            let answer = reflection.answer(v1, sent: &sent)
            try await response.write(
                Grpc_Reflection_V1alpha_ServerReflectionResponse(
                    serializedBytes: try answer.serializedBytes() as [UInt8]
                )
            )
        }
    }
}
