import FleetEngineAPI
import FuzzSupport
import SwiftProtobuf

@testable import FleetEngineEmulator

/// The query strings of every REST route of both APIs: any text is bound to each RPC's request message by its
/// HTTP rule (``QueryBinding``) and merged with the path's variables, then checked by the field rules and
/// serialized, as a request is before its service reads it. Nothing may trap; an unbindable query is an
/// INVALID_ARGUMENT.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQuery(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count) { bytes in
        guard let text = FuzzInput.text(bytes) else { return }
        let items = QueryBinding.items(of: text)
        for route in Routes.all { route(items) }
    }
}

/// One closure for each binding of each RPC: binds a query to its request message.
private struct Routes: UnaryMethodVisitor {
    typealias Caller = Principal
    var routes: [@Sendable ([(name: String, value: String)]) -> Void] = []

    static let all: [@Sendable ([(name: String, value: String)]) -> Void] = {
        let store = try! SQLiteFleetStore(inMemory: ())
        let rpcs = FleetEngineRPCs(
            vehicles: OnDemandService(store: store),
            deliveries: DeliveryService(store: store)
        )
        var routes = Routes()
        rpcs.visitUnaryMethods(&routes)
        return routes.routes
    }()

    mutating func visit<Method: UnaryMethod>(
        _ method: Method.Type,
        _ handler: @escaping @Sendable (Method.Input, Principal) async throws -> Method.Output
    ) {
        for binding in HTTPRules.bindings(of: Method.rpc) {
            let transcoder = RESTTranscoder<Method.Input>(binding: binding, maximumBodySize: 1 << 20)
            let path = binding.template.variables.map { _ in "providers/p/vehicles/v" }
            routes.append { items in
                var message = Method.Input()
                guard (try? transcoder.merge(query: items, path: path, into: &message)) != nil else { return }
                guard let checked = try? FieldBehaviors.checked(message) else { return }
                _ = try? checked.serializedBytes() as [UInt8]
            }
        }
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_query_main")
public func fuzzqueryMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzQuery($0, $1) }
}
