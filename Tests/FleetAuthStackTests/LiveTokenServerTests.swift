import FleetAuthClient
import FleetAuthCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetTokenServer
import Foundation
import Logging
import ServiceLifecycle
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Token provider against a live token server", .temporaryResources)
struct LiveTokenServerTests {
    @Test("the provider fetches, caches and refreshes real tokens over loopback; 403 is terminal")
    func live() async throws {
        let directory = try TestResources.required().temporaryDirectory("client")
        let server = try await TokenServer(
            configuration: .init(dataDirectory: directory, bcryptCost: 4),
            store: try SQLiteTokenServerStore(path: directory + "/" + TokenServer.databaseFileName),
            keyGenerator: TestKeys.generator
        )
        try await server.users.addUser(AppUser(username: "dana", role: .driver), password: "a long enough password")
        try await server.users.grant(Grant(kind: .vehicle, id: "v1"), to: "dana")
        let session = try await server.login.login(username: "dana", password: "a long enough password", address: nil)
        var logger = Logger(label: "live")
        logger.logLevel = .critical
        let ports = AsyncStream.makeStream(of: Int.self)
        let application = server.application(port: 0, logger: logger) { ports.continuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let token = session.token
            let fetcher = TokenEndpointFetcher(
                urlTemplate: "http://127.0.0.1:\(port)/token/driver/{vehicleId}",
                headers: { ["Authorization": "Bearer \(token)"] }
            )
            let provider = CachingTokenProvider(fetcher: fetcher)
            do {
                let jwt = try await provider.token(for: .vehicle("v1"))
                let claims = try StrictJSONParser().parseObject(try CompactJWS(jwt).payload)
                #expect(claims["authorization"] == .object(["vehicleid": "v1"]))
                #expect(try await provider.token(for: .vehicle("v1")) == jwt)
                let denied = await #expect(throws: FleetTokenError.self) {
                    try await provider.token(for: .vehicle("v2"))
                }
                #expect(denied?.code == .endpointRejected && denied?.httpStatus == 403 && denied?.isTransient == false)
                let anonymous = TokenEndpointFetcher(urlTemplate: "http://127.0.0.1:\(port)/token/driver/{vehicleId}")
                let unauthenticated = await #expect(throws: FleetTokenError.self) {
                    try await anonymous.fetchToken(for: .vehicle("v1"))
                }
                #expect(unauthenticated?.httpStatus == 401)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
