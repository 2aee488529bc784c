import FleetAuthCore
import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import Hummingbird
import SwiftProtobuf

/// Fleet Engine's REST APIs (both of them), derived from the protos: every RPC of ``FleetEngineRPCs`` is routed by
/// its `google.api.http` rule (``HTTPRules``), and each request is transcoded into the RPC's request message as
/// Google's front end transcodes it, then passed through ``RPCPipeline`` to the RPC's one implementation, the one gRPC
/// calls reach. No route is written by hand.
struct RESTRoutes: UnaryMethodVisitor {
    typealias Caller = Principal

    let router: Router<EmulatorRequestContext>
    let pipeline: RPCPipeline
    let maximumBodySize: Int

    /// Routes every binding of every RPC of `rpcs` on `router`.
    static func register(
        _ rpcs: FleetEngineRPCs,
        through pipeline: RPCPipeline,
        on router: Router<EmulatorRequestContext>,
        maximumBodySize: Int
    ) {
        var routes = RESTRoutes(router: router, pipeline: pipeline, maximumBodySize: maximumBodySize)
        rpcs.visitUnaryMethods(&routes)
    }

    /// Routes each of the RPC's REST bindings: each call goes through the pipeline to `handler`, its message read by
    /// the binding's transcoder only when the pipeline reads it (after authentication).
    mutating func visit<Method: UnaryMethod>(
        _ method: Method.Type,
        _ handler: @escaping @Sendable (Method.Input, Principal) async throws -> Method.Output
    ) {
        let rpc = Method.rpc.fullName
        let bindings = HTTPRules.bindings(of: Method.rpc)
        precondition(!bindings.isEmpty, "\(rpc) has no google.api.http rule")
        let pipeline = pipeline
        for binding in bindings {
            let transcoder = RESTTranscoder<Method.Input>(binding: binding, maximumBodySize: maximumBodySize)
            router.on(RouterPath(binding.template.routerPath), method: binding.method) { request, context in
                let query = request.queryItems
                let output = try await pipeline.run(
                    rpc,
                    over: .rest,
                    target: String(request.uri.path),
                    authorization: request.headers[.authorization],
                    read: { try await transcoder.message(request, query: query, parameters: context.parameters) },
                    handler
                )
                return try ProtoJSON.response(
                    output,
                    enumsAsIntegers: RESTTranscoder<Method.Input>.enumsAsIntegers(query)
                )
            }
        }
    }
}

/// Google's HTTP-to-RPC mapping for one binding (HttpRule's rules): the path's variables set the fields they name,
/// the body is the whole message (`*`) or the one field the rule names, and every other field may come from the
/// query string (``QueryBinding``). A path variable wins over the same field in the body.
struct RESTTranscoder<Input: SwiftProtobuf.Message>: Sendable {
    let binding: HTTPBinding
    let query: QueryBinding
    /// The JSON name of the field the body carries, when it is one field.
    let bodyMember: String?
    /// The field numbers of each path variable's field, from the request message down.
    let variableNumbers: [[Int]]
    let maximumBodySize: Int

    init(binding: HTTPBinding, maximumBodySize: Int) {
        let name = Input.protoMessageName
        self.binding = binding
        self.maximumBodySize = maximumBodySize
        query = QueryBinding(message: name, binding: binding)
        let fields = ProtoContract.messages[name]?.field ?? []
        switch binding.body {
        case "", "*": bodyMember = nil
        default:
            guard let field = fields.first(where: { $0.name == binding.body }), field.type == .message else {
                preconditionFailure("\(name) has no message field \(binding.body) for a REST body")
            }
            bodyMember = field.jsonName
        }
        variableNumbers = binding.template.variables.map { variable in
            var numbers: [Int] = []
            var message = name
            for (index, part) in variable.fieldPath.enumerated() {
                guard let field = ProtoContract.messages[message]?.field.first(where: { $0.name == part }),
                    index == variable.fieldPath.count - 1 ? field.type == .string : field.type == .message,
                    field.label != .repeated
                else { preconditionFailure("\(name): the path binds \(variable.fieldPath), not a string field") }
                numbers.append(Int(field.number))
                message = ProtoContract.typeName(field)
            }
            return numbers
        }
    }

    /// The request message of `request`.
    func message(
        _ request: Request,
        query items: [(name: String, value: String)],
        parameters: Parameters
    ) async throws(GoogleAPIError) -> Input {
        var message: Input
        if let bodyMember {
            let bytes = try await ProtoJSON.bodyBytes(request, limit: maximumBodySize)
            message = try ProtoJSON.decode(bytes, as: Input.self, field: bodyMember, member: bodyMember)
        } else if binding.body == "*" {
            let bytes = try await ProtoJSON.bodyBytes(request, limit: maximumBodySize)
            message = try ProtoJSON.decode(bytes, as: Input.self, field: "request")
        } else {
            message = Input()
        }
        let values = try binding.template.values(
            parameter: { parameters.get($0) },
            rest: { parameters.getCatchAll() }
        )
        try merge(query: items, path: values.map(\.value), into: &message)
        return message
    }

    /// Merges the query's fields and the path's variables (one value for each of the template's variables) into
    /// `message`, as protobuf, in one pass: the path's last, so that it wins over the body.
    func merge(
        query items: [(name: String, value: String)],
        path values: [String],
        into message: inout Input
    ) throws(GoogleAPIError) {
        var wire: [UInt8] = []
        if !QueryBinding.isEmpty(items) {
            let (fromQuery, masks) = try query.decode(items, as: Input.self)
            // The binding takes only declared enum values; still, nothing decoded from JSON is serialized unchecked.
            guard EnumRange.fits(fromQuery) else {
                throw .invalidArgument("Invalid JSON payload received. An enum value in the query is out of range.")
            }
            do {
                wire = try fromQuery.serializedBytes() + masks
            } catch {
                throw GoogleAPIError(.internal, "The request could not be assembled: \(error).")
            }
        }
        for (index, value) in values.enumerated() {
            wire += ProtoWire.string(value, at: variableNumbers[index][...])
        }
        do {
            try message.merge(serializedBytes: wire)
        } catch {
            throw GoogleAPIError(.internal, "The request could not be assembled: \(error).")
        }
    }

    /// Whether the caller asked for enums by number: `$alt=json;enum-encoding=int`, which Google's REST clients send.
    static func enumsAsIntegers(_ items: [(name: String, value: String)]) -> Bool {
        items.contains { ($0.name == "$alt" || $0.name == "alt") && $0.value.contains("enum-encoding=int") }
    }
}

extension Request {
    /// The query parameters in order (``QueryBinding/items(of:)``).
    var queryItems: [(name: String, value: String)] {
        guard let query = uri.query, !query.isEmpty else { return [] }
        return QueryBinding.items(of: query)
    }
}
