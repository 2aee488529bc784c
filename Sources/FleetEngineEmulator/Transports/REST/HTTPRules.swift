import FleetEngineAPI
import HTTPTypes
import SwiftProtobuf

/// One REST binding of an RPC, from its `google.api.http` annotation (the rule or one of its
/// `additional_bindings`).
struct HTTPBinding: Sendable {
    let method: HTTPRequest.Method
    let template: PathTemplate
    /// What the request body carries: nothing (`""`), the whole request message (`"*"`), or one top-level field of
    /// it, by proto name (`"vehicle"`).
    let body: String
}

/// The REST bindings of every Fleet Engine RPC, read once from the `google.api.http` annotations of the compiled
/// protos (``ProtoContract``). Nothing about a route is written by hand: its method, path, path variables, body and
/// query parameters all follow from the rule and the request message's descriptor.
enum HTTPRules {
    /// The bindings of each RPC, by `package.Service/Method`.
    static let all: [String: [HTTPBinding]] = {
        var all: [String: [HTTPBinding]] = [:]
        for (name, method) in ProtoContract.methods where method.options.hasGoogle_Api_http {
            let rule = method.options.Google_Api_http
            all[name] = ([rule] + rule.additionalBindings).map { binding(of: $0, in: name) }
        }
        return all
    }()

    /// The bindings of `method`; none if its proto has no `google.api.http` rule.
    static func bindings(of method: RPCMethod) -> [HTTPBinding] {
        all[method.fullName] ?? []
    }

    private static func binding(of rule: Google_Api_HttpRule, in method: String) -> HTTPBinding {
        let verb: HTTPRequest.Method
        let path: String
        switch rule.pattern {
        case .get(let value): (verb, path) = (.get, value)
        case .put(let value): (verb, path) = (.put, value)
        case .post(let value): (verb, path) = (.post, value)
        case .delete(let value): (verb, path) = (.delete, value)
        case .patch(let value): (verb, path) = (.patch, value)
        case .custom(let pattern):
            guard let kind = HTTPRequest.Method(pattern.kind) else {
                preconditionFailure("\(method): \"\(pattern.kind)\" is not an HTTP method")
            }
            (verb, path) = (kind, pattern.path)
        case nil: preconditionFailure("\(method): its google.api.http rule has no pattern")
        }
        do {
            return HTTPBinding(method: verb, template: try PathTemplate(path), body: rule.body)
        } catch {
            preconditionFailure("\(method): \(error)")
        }
    }
}
