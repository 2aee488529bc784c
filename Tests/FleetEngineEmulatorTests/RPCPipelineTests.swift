import FleetAuthServerCore
import FleetAuthTesting
import NIOConcurrencyHelpers
import Testing

@testable import FleetEngineEmulator

/// The chain both transports pass every call through.
@Suite("RPC pipeline")
struct RPCPipelineTests {
    typealias F = EmulatorFixture
    struct Unexpected: Error {}

    static let pipeline = pipeline(metrics: EmulatorMetrics())

    static func pipeline(metrics: EmulatorMetrics) -> RPCPipeline {
        RPCPipeline(authenticator: TokenAuthenticator(accounts: F.accounts), refresher: nil, metrics: metrics)
    }
    static let rpc = "maps.fleetengine.v1.VehicleService/GetVehicle"

    @Test("an unauthenticated call is refused before its message is read")
    func authenticatesFirst() async throws {
        let reads = NIOLockedValueBox(0)
        for authorization in [nil, "Bearer not-a-token", "Basic abc"] {
            await #expect(throws: GoogleAPIError.self) {
                try await Self.pipeline.run(
                    Self.rpc,
                    over: .rest,
                    authorization: authorization,
                    read: { reads.withLockedValue { $0 += 1 } },
                    { _, _ in "answered" }
                )
            }
        }
        #expect(reads.withLockedValue { $0 } == 0)
        let answer = try await Self.pipeline.run(
            Self.rpc,
            over: .rest,
            authorization: "Bearer \(F.server)",
            read: { reads.withLockedValue { $0 += 1 } },
            { _, caller in caller.account.project }
        )
        #expect(answer == "demo-project" && reads.withLockedValue { $0 } == 1)
    }

    @Test("any failure of a method is Google's error: its own, a store's in Google's terms, else INTERNAL")
    func errors() async throws {
        let cases: [(any Error, GoogleAPIError.Code)] = [
            (GoogleAPIError.notFound("gone"), .notFound),
            (StoreError.unavailable("down"), .unavailable),
            (Unexpected(), .internal),
        ]
        for (thrown, code) in cases {
            do {
                _ = try await Self.pipeline.run(
                    Self.rpc,
                    over: .grpc,
                    authorization: "Bearer \(F.server)",
                    read: { () }
                ) { _, _ in
                    throw thrown
                }
                Issue.record("\(thrown) was not thrown")
            } catch let error as GoogleAPIError {
                #expect(error.code == code, "\(thrown)")
            }
        }
        // What the transport's reading throws passes through as it is, for the transport to answer.
        await #expect(throws: Unexpected.self) {
            try await Self.pipeline.run(
                Self.rpc,
                over: .grpc,
                authorization: "Bearer \(F.server)",
                read: { throw Unexpected() }
            ) { _, _ in 1 }
        }
    }

    @Test("every call is counted by RPC, transport and canonical code, and timed by RPC, whatever failed")
    func metrics() async throws {
        let metrics = EmulatorMetrics()
        let pipeline = Self.pipeline(metrics: metrics)
        let update = "maps.fleetengine.v1.VehicleService/UpdateVehicle"
        _ = try await pipeline.run(update, over: .rest, authorization: "Bearer \(F.server)", read: { () }) { _, _ in 1 }
        _ = try await pipeline.run(update, over: .grpc, authorization: "Bearer \(F.server)", read: { () }) { _, _ in 1 }
        _ = try? await pipeline.run(update, over: .grpc, authorization: nil, read: { () }) { _, _ in 1 }
        _ = try? await pipeline.run(update, over: .rest, authorization: "Bearer \(F.server)", read: { () }) { _, _ in
            throw GoogleAPIError.permissionDenied("not yours")
        }
        _ = try? await pipeline.run(update, over: .rest, authorization: "Bearer \(F.server)", read: { () }) { _, _ in
            throw Unexpected()
        }
        // A transport's own reading error that names no canonical code is counted as INTERNAL too.
        _ = try? await pipeline.run(
            update,
            over: .rest,
            authorization: "Bearer \(F.server)",
            read: { throw Unexpected() }
        ) {
            _,
            _ in 1
        }
        let text = metrics.text
        let series = "fleet_engine_rpcs_total{method=\"\(update)\",transport="
        for (labels, count) in [
            (#""rest",code="OK"}"#, 1), (#""grpc",code="OK"}"#, 1), (#""grpc",code="UNAUTHENTICATED"}"#, 1),
            (#""rest",code="PERMISSION_DENIED"}"#, 1), (#""rest",code="INTERNAL"}"#, 2),
        ] {
            #expect(text.contains(series + labels + " \(count)"), "\(labels) in\n\(text)")
        }
        #expect(text.contains("fleet_engine_rpc_duration_seconds_count{method=\"\(update)\"} 6"), "\(text)")
        #expect(metrics.publicText.contains("fleet_engine_rpcs_total"))
    }
}
