import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerSupport
import FleetAuthServerTesting
import FleetAuthTesting
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
            let key = try TestKeys.keyNow(projectID: "demo-project", name: "late")
            authenticator.replaceKeys([key.verificationKey], for: late.email)
            let (ready, readyBody) = try await Self.get(client, "/readyz")
            #expect(ready == .ok)
            #expect(readyBody["status"] == "ready")
        }
    }

    /// A report, once the probe has given it.
    actor Answer {
        var report: Readiness.Report?
        func set(_ report: Readiness.Report) { self.report = report }
    }

    @Test(
        "a component that throws is failing with its error; one that hangs is failing after the timeout, not a hung probe"
    )
    func components() async throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "database is locked" } }
        // The timeout counts on a clock only the test moves: the quick checks answer while it stands still, and the
        // hanging one is given up on when the test moves it past the timeout, however slow the machine.
        let clock = ManualClock()
        let quick = await Readiness(
            [.probing("works") {}, .probing("throws") { throw Broken() }],
            timeout: .seconds(5),
            clock: clock
        ).report()
        #expect(!quick.isReady)
        #expect(quick.components.map(\.name) == ["works", "throws"])
        #expect(quick.components.map(\.problem) == [nil, "database is locked"])

        let hanging = Readiness(
            [
                .init("hangs") {
                    await Waiting.forever()
                    return nil
                }
            ],
            timeout: .seconds(5),
            clock: clock
        )
        // Moves the clock on until the probe answers: it does once its timer, whenever it started, has passed.
        let answer = Answer()
        let probe = Task { await answer.set(await hanging.report()) }
        try await Waiting.until("the probe answering once its timeout passed") {
            clock.advance(by: .seconds(5))
            return await answer.report != nil
        }
        await probe.value
        let result = try #require(await answer.report)
        #expect(!result.isReady)
        #expect(result.components.map(\.problem) == ["no answer within 5.0 seconds"])
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
                    // Ready once the pool's first connection answers within the probe's deadline: on a loaded
                    // machine the first probes may run out of time, so wait for the event rather than assert it.
                    try await Waiting.until("/readyz answering 200 before PostgreSQL is stopped") {
                        try await Self.get(client, "/readyz").0 == .ok
                    }
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
