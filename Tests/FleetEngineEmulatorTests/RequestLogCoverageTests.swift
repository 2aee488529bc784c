import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineAPI
import Foundation
import GRPCCore
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FleetEngineEmulator

/// Every RPC of both APIs, over both transports, read from the protos (``HTTPRules``: each RPC's `google.api.http`
/// binding, the RPC itself for gRPC): an RPC added to the protos is covered without editing this test.
@Suite("Request log: one entry for every call of every RPC")
struct RequestLogCoverageTests {
    typealias F = EmulatorFixture

    /// A path for a binding: each variable's wildcards filled with an ID named after the collection before it.
    static func path(_ template: PathTemplate) -> String {
        var parts: [String] = []
        for segment in template.segments {
            switch segment {
            case .literal(let text): parts.append(text)
            case .wildcard, .recursiveWildcard: parts.append(id(after: parts.last))
            }
        }
        return "/" + parts.joined(separator: "/") + (template.verb.map { ":" + $0 } ?? "")
    }

    static func id(after collection: String?) -> String {
        switch collection {
        case "providers": F.project
        case "vehicles": "v1"
        case "trips": "t1"
        case "deliveryVehicles": "dv1"
        case "tasks": "task1"
        case "taskTrackingInfo": "track1"
        default: "x"
        }
    }

    /// The entry label a path's ID should produce.
    static func label(of path: String) -> (String, String)? {
        ResourceNames(name: String(path.dropFirst(4))).labels.last
    }

    @available(FleetAuthGRPC, *)
    @Test("accepted and refused, REST and gRPC: one entry each, with Google's logName, resource, labels and @type")
    func everyRPC() async throws {
        let accounts = F.accounts + DeliveryFixture.accounts
        let rpcs = HTTPRules.all.keys.filter { $0.hasPrefix("maps.fleetengine.") }.sorted()
        try #require(rpcs.count >= 20, "\(rpcs)")
        let driver = F.driver("v9")
        struct Call {
            let rpc: String
            let transport: String
            let token: String?
            let path: String?
        }
        try await GRPCEmulator.with(accounts: accounts) { emulator in
            var calls: [Call] = []
            for rpc in rpcs {
                let server = rpc.contains(".delivery.") ? DeliveryFixture.server : F.server
                let binding = try #require(HTTPRules.all[rpc]?.first)
                let path = Self.path(binding.template)
                for token in [nil, driver, server] {
                    let body: String? = binding.body.isEmpty ? nil : "{}"
                    _ = try await emulator.rest.call(binding.method, path, token: token, body: body)
                    calls.append(Call(rpc: rpc, transport: "rest", token: token, path: path))
                    let parts = rpc.split(separator: "/").map(String.init)
                    let descriptor = MethodDescriptor(fullyQualifiedService: parts[0], method: parts[1])
                    var metadata: Metadata = [:]
                    if let token { metadata.addString("Bearer \(token)", forKey: "authorization") }
                    metadata.addString("name=providers/\(F.project)/x/x", forKey: "x-goog-request-params")
                    _ = try? await emulator.client.unary(
                        request: ClientRequest(message: [UInt8](), metadata: metadata),
                        descriptor: descriptor,
                        serializer: RawBytesCoder(),
                        deserializer: RawBytesCoder(),
                        options: .defaults
                    ) { try $0.message }
                    calls.append(Call(rpc: rpc, transport: "grpc", token: token, path: nil))
                }
            }
            var entries: [JSONObject] = []
            var token: String?
            repeat {
                let (status, answer) = try await RequestLogTests.list(
                    emulator.rest,
                    token: F.server,
                    pageSize: 1000,
                    pageToken: token
                )
                try #require(status == .ok, "\(answer.jsonText)")
                entries += RequestLogTests.entries(answer)
                token = answer["nextPageToken"]?.stringValue
            } while token != nil
            try #require(entries.count == calls.count, "\(entries.count) entries for \(calls.count) calls")
            for (call, entry) in zip(calls, entries) {
                let method = String(call.rpc.split(separator: "/")[1])
                let deliveries = call.rpc.contains(".delivery.")
                let where_ = "\(call.rpc) over \(call.transport), \(call.token == nil ? "no token" : "a token")"
                #expect(
                    entry["logName"]?.stringValue
                        == "projects/\(F.project)/logs/fleetengine.googleapis.com%2F\(RequestLogEntryBuilder.snakeCase(method))",
                    "\(where_)"
                )
                let resource = entry["resource"]?.objectValue
                #expect(
                    resource?["type"]?.stringValue
                        == (deliveries
                            ? "fleetengine.googleapis.com/DeliveryFleet" : "fleetengine.googleapis.com/Fleet"),
                    "\(where_)"
                )
                #expect(
                    resource?["labels"]?.objectValue?["resource_container"]?.stringValue == "projects/\(F.project)",
                    "\(where_)"
                )
                let payload = entry["jsonPayload"]?.objectValue
                let package = deliveries ? "maps.fleetengine.delivery.log.v1" : "maps.fleetengine.v1"
                #expect(payload?["@type"]?.stringValue == "type.googleapis.com/\(package).\(method)Log", "\(where_)")
                #expect(payload?["fleetauthTransport"]?.stringValue == call.transport, "\(where_)")
                if let path = call.path, let (key, value) = Self.label(of: path) {
                    #expect(entry["labels"]?.objectValue?[key]?.stringValue == value, "\(where_): \(path)")
                }
                let decision = try #require(payload?["fleetauthDecision"]?.objectValue, "\(where_)")
                let code = payload?["errorResponse"]?.objectValue?["code"]?.stringValue
                switch call.token {
                case nil:
                    #expect(decision["check"]?.stringValue == "credentials" && code == "UNAUTHENTICATED", "\(where_)")
                case driver where code == "PERMISSION_DENIED":
                    #expect(decision["outcome"]?.stringValue == "REFUSED", "\(where_)")
                    #expect(
                        ["role", "claims"].contains(decision["check"]?.stringValue ?? ""),
                        "\(where_): \(decision)"
                    )
                default:
                    #expect(decision["outcome"]?.stringValue == "ALLOWED", "\(where_): \(decision)")
                }
            }
        }
    }
}
