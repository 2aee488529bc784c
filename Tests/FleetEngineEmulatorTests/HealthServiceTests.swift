import FleetAuthServerSupport
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineAPI
import GRPCCore
import NIOConcurrencyHelpers
import SwiftProtobuf
import Testing

@testable import FleetEngineEmulator

@Suite("gRPC health: Watch on the injected clock")
struct HealthServiceTests {
    typealias Status = Grpc_Health_V1_HealthCheckResponse.ServingStatus

    /// Passes each status a Watch writes to a stream.
    struct StatusWriter: RPCWriterProtocol {
        let continuation: AsyncStream<Status>.Continuation

        func write(_ element: Grpc_Health_V1_HealthCheckResponse) async throws { continuation.yield(element.status) }

        func write(contentsOf elements: some Sequence<Grpc_Health_V1_HealthCheckResponse>) async throws {
            for element in elements { try await write(element) }
        }
    }

    @Test("Watch looks at readiness again after each interval of the injected clock, and ends at shutdown")
    @available(FleetAuthGRPC, *)
    func watchOnTheInjectedClock() async throws {
        let clock = ManualClock()
        let ready = NIOLockedValueBox(false)
        let shuttingDown = NIOLockedValueBox(false)
        let readiness = Readiness(
            [.init("store") { ready.withLockedValue { $0 } ? nil : "not yet" }],
            timeout: .seconds(5),
            clock: clock
        )
        let health = HealthService(
            services: ["maps.fleetengine.v1.VehicleService"],
            readiness: readiness,
            watchInterval: .seconds(1),
            shuttingDown: shuttingDown
        )
        let (statuses, continuation) = AsyncStream.makeStream(of: Status.self)
        let watch = Task {
            try await health.watch(
                request: .with { $0.service = "maps.fleetengine.v1.VehicleService" },
                response: RPCWriter(wrapping: StatusWriter(continuation: continuation)),
                context: ServerContext(
                    descriptor: Grpc_Health_V1_Health.Method.Watch.descriptor,
                    remotePeer: "",
                    localPeer: "",
                    cancellation: .init()
                )
            )
            continuation.finish()
        }
        var received = statuses.makeAsyncIterator()
        #expect(await received.next() == .notServing)

        // Ready now, but the watch looks again only when its interval has passed on the injected clock: once the
        // watch sleeps, nothing is written until the clock moves.
        ready.withLockedValue { $0 = true }
        try await Waiting.until("the watch sleeps") { clock.sleeperCount == 1 }
        clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        #expect(await received.next() == .serving)

        // Shutting down: NOT_SERVING at the next look, and the stream ends.
        try await Waiting.until("the watch sleeps again") { clock.sleeperCount == 1 }
        shuttingDown.withLockedValue { $0 = true }
        clock.advance(by: .seconds(1))
        #expect(await received.next() == .notServing)
        #expect(await received.next() == nil)
        try await watch.value
    }
}
