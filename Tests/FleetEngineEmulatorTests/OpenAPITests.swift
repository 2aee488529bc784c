import FleetAuthCore
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("OpenAPI description")
struct OpenAPITests {
    /// `(method, path)` pairs of the document, read from its `paths` section (two-space path keys, four-space
    /// method keys).
    static func documentedOperations(_ yaml: String) -> Set<String> {
        var operations = Set<String>()
        var inPaths = false
        var path: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            guard inPaths else { continue }
            if !line.hasPrefix(" ") && !line.isEmpty { break }
            if line.hasPrefix("  /") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     ") {
                let key = line.dropFirst(4).split(separator: ":").first.map(String.init) ?? ""
                if ["get", "put", "post", "delete", "patch"].contains(key) {
                    operations.insert("\(key.uppercased()) \(path)")
                }
            }
        }
        return operations
    }

    @Test("every /v1 route is documented and every documented operation is routed")
    func matchesRoutes() throws {
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: []),
            store: try SQLiteFleetStore(inMemory: ())
        )
        let routed = Set(
            router.routes.filter { $0.path.description.hasPrefix("/v1") }.map { "\($0.method) \($0.path)" }
        )
        let documented = Self.documentedOperations(FleetEngineEmulator.openAPIDocument)
        #expect(!documented.isEmpty)
        #expect(
            routed == documented,
            "routed only: \(routed.subtracting(documented)); documented only: \(documented.subtracting(routed))"
        )
    }

    @Test("GET /openapi.yaml serves the document with the bearer security scheme, without authentication")
    func served() async throws {
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: []),
            store: try SQLiteFleetStore(inMemory: ())
        )
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                let text = String(buffer: response.body)
                #expect(text.contains("openapi: 3.1.0"))
                #expect(text.contains("scheme: bearer"))
                #expect(text == FleetEngineEmulator.openAPIDocument)
            }
        }
    }
}
