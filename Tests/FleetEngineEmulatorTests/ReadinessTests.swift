import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerSupport
import FleetAuthServerTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `/healthz` and `/readyz` as a load balancer or a Kubernetes probe sees them.
@Suite("Emulator: health and readiness")
struct ReadinessTests {
    typealias F = EmulatorFixture

    static func get(_ client: any TestClientProtocol, _ path: String) async throws -> (HTTPResponse.Status, JSONObject)
    {
        try await client.execute(uri: path, method: .get) { response in
            #expect(response.headers[.contentType] == "application/json; charset=UTF-8")
            #expect(response.headers[.cacheControl] == "no-store")
            return (response.status, try StrictJSONParser().parseObject(Array(response.body.readableBytesView)))
        }
    }

    @Test(
        "a trusted account whose keys are not loaded makes it not ready, naming the account; its keys arriving fix it"
    )
    func trustedKeys() async throws {
        let late = TrustedServiceAccount(
            email: "late@demo-project.iam.gserviceaccount.com",
            project: "demo-project",
            roles: [.viewer]
        )
        let authenticator = TokenAuthenticator(accounts: F.accounts + [(late, [])])
        let router = FleetEngineEmulator.makeRouter(
            authenticator: authenticator,
            store: try SQLiteFleetStore(inMemory: ())
        )
        try await Application(router: router).test(.router) { client in
            #expect(try await Self.get(client, "/healthz") == (.ok, ["status": "ok"]))
            let (status, body) = try await Self.get(client, "/readyz")
            #expect(status == .serviceUnavailable)
            #expect(body["status"] == "not ready")
            let components = try #require(body["components"]?.objectValue)
            #expect(components["store"] == ["status": "ok"])
            #expect(
                components["trusted-keys"]
                    == ["status": "failing", "error": "no keys loaded for late@demo-project.iam.gserviceaccount.com"]
            )
            let key = try ServiceAccountKey.generate(projectID: "demo-project", name: "late")
            authenticator.replaceKeys([key.verificationKey], for: late.email)
            let (ready, readyBody) = try await Self.get(client, "/readyz")
            #expect(ready == .ok)
            #expect(readyBody["status"] == "ready")
        }
    }

    @Test(
        "a component that throws is failing with its error; one that hangs is failing after the timeout, not a hung probe"
    )
    func components() async throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "database is locked" } }
        let readiness = Readiness(
            [
                .probing("works") {},
                .probing("throws") { throw Broken() },
                .init("hangs") {
                    await Waiting.forever()
                    return nil
                },
            ],
            // Long enough that the two quick checks answer in time on a loaded test machine.
            timeout: .seconds(5)
        )
        let started = ContinuousClock.now
        let report = await readiness.report()
        // The hanging check sleeps an hour: answering within minutes shows the deadline was honoured. A tighter bound
        // would measure the machine instead — the deadline's timer runs on the cooperative pool, which other tests'
        // synchronous work can hold for seconds on two cores.
        #expect(ContinuousClock.now - started < .seconds(300))
        #expect(!report.isReady)
        #expect(report.components.map(\.name) == ["works", "throws", "hangs"])
        #expect(report.components.map(\.problem) == [nil, "database is locked", "no answer within 5.0 seconds"])
    }

    @Test(
        "a PostgreSQL that is stopped: /readyz is 503 naming the store within its deadline, ready again once restarted",
        .enabled(if: PostgresCluster.binDirectory != nil || PostgresTestServer.required)
    )
    func stoppedPostgres() async throws {
        // Orchestrators' probes give up after 1 s by default: every check's deadline is below that.
        #expect(EmulatorServer.Configuration().readinessTimeout < .seconds(1))
        try await PostgresCluster.run { cluster in
            try await PostgresFleetStore.withConnected(cluster.url, maximumConnections: 4) { store in
                let router = FleetEngineEmulator.makeRouter(
                    authenticator: TokenAuthenticator(accounts: F.accounts),
                    store: store
                )
                try await Application(router: router).test(.router) { client in
                    #expect(try await Self.get(client, "/readyz").0 == .ok)
                    try await PostgresCluster.blocking { try cluster.stop(mode: "fast") }
                    // Each probe answers (503, the store named), never waits for the database to come back.
                    for _ in 0..<3 {
                        let (status, body) = try await Self.get(client, "/readyz")
                        #expect(status == .serviceUnavailable)
                        let store = try #require(body["components"]?.objectValue?["store"]?.objectValue)
                        #expect(store["status"] == "failing", "\(store)")
                    }
                    try await PostgresCluster.blocking { try cluster.start() }
                    // Ready again once the pool reconnects: wait for that event.
                    try await Waiting.until("/readyz answering 200 after PostgreSQL restarted") {
                        try await Self.get(client, "/readyz").0 == .ok
                    }
                }
            }
        }
    }
}
