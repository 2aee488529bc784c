import FleetAuthClient
import FleetAuthCore
import FleetAuthServerTesting
import FleetAuthStack
import FleetAuthTesting
import FleetTokenServer
import Foundation
import Testing

@Suite("Deliveries through the whole chain: token server, emulator, client", .temporaryResources)
struct LiveDeliveriesTests {
    @Test(
        "a backend plans a route; the driver app reports and completes stops; the consumer tracks its parcel to CLOSED"
    )
    func deliveryDay() async throws {
        let fixture = try await StackFixture()
        // A delivery driver granted van-1 and a consumer granted the tracking ID parcel-1.
        var sessions: [String: String] = [:]
        for (name, role, grant) in [
            ("dora", AppUserRole.driver, Grant(kind: .deliveryVehicle, id: "van-1")),
            ("cleo", .consumer, Grant(kind: .tracking, id: "parcel-1")),
        ] {
            try await fixture.stack.tokenServer.users.addUser(
                AppUser(username: name, role: role),
                password: StackFixture.password
            )
            try await fixture.stack.tokenServer.users.grant(grant, to: name)
            sessions[name] = try await fixture.stack.tokenServer.login.login(
                username: name,
                password: StackFixture.password,
                address: nil
            ).token
        }
        try await fixture.stack.run { endpoints in
            func fetcher(_ user: String, _ path: String) throws -> TokenEndpointFetcher {
                let session = try #require(sessions[user] ?? fixture.sessions[user])
                return TokenEndpointFetcher(
                    urlTemplate: endpoints.tokenServerURL + path,
                    headers: { ["Authorization": "Bearer \(session)"] }
                )
            }
            // The backend: an operator's delivery server tokens.
            let backend = DeliveriesClient(try fixture.client(endpoints, user: "ops", path: "/token/delivery_server"))
            try await backend.createDeliveryVehicle(
                "van-1",
                ["type": "AUTO", "lastLocation": ["location": ["latitude": 51.49, "longitude": -0.12]]]
            )
            for (task, tracking, latitude) in [("t-2", "parcel-2", 51.50), ("t-1", "parcel-1", 51.51)] {
                try await backend.createTask(
                    task,
                    [
                        "type": "DELIVERY", "state": "OPEN", "trackingId": .string(tracking), "taskDuration": "60s",
                        "plannedLocation": ["point": ["latitude": .double(latitude), "longitude": -0.12]],
                    ]
                )
            }
            let route = [
                DeliveryStop(latitude: 51.50, longitude: -0.12, taskIDs: ["t-2"]),
                DeliveryStop(latitude: 51.51, longitude: -0.12, taskIDs: ["t-1"]),
            ]
            try await backend.updateStops("van-1", route)

            // The consumer's page: its parcel, two stops away.
            let consumerClock = ManualClock()
            let consumer = DeliveriesClient(
                try fixture.client(
                    endpoints,
                    fetcher: try fetcher("cleo", "/token/delivery_consumer/{trackingId}"),
                    clock: consumerClock
                )
            )
            let tracker = ShipmentTracker(client: consumer, trackingID: "parcel-1", clock: consumerClock)
            var shipments = tracker.snapshots().makeAsyncIterator()
            let first = try #require(try await shipments.next())
            #expect(first.trackingID == "parcel-1" && first.state == "OPEN" && first.remainingStopCount == 2)
            #expect(first.vehicleLocation?.latitude == 51.49)
            #expect(first.estimatedArrival != nil)
            await #expect(throws: FleetEngineClientError.self) {
                _ = try await consumer.getTaskTrackingInfo("parcel-2", context: .tracking("parcel-1"))
            }

            // The driver app with the token server's (untrusted) delivery driver tokens: its location goes
            // through; its stops are refused (403): an untrusted driver's route is the backend's.
            let driverClock = ManualClock()
            let driver = DeliveriesClient(
                try fixture.client(
                    endpoints,
                    fetcher: try fetcher("dora", "/token/delivery_driver/{deliveryVehicleId}"),
                    clock: driverClock
                )
            )
            let reporter = DeliveryVehicleReporter(
                client: driver,
                deliveryVehicleID: "van-1",
                stops: route,
                clock: driverClock
            )
            var reports = reporter.results.makeAsyncIterator()
            async let reporting: Void = reporter.run()
            reporter.report(VehicleLocation(latitude: 51.499, longitude: -0.12, time: nil))
            let moved = try #require(await reports.next())
            #expect(moved.isAccepted, "\(moved)")
            reporter.arrived()
            let refused = try #require(await reports.next())
            #expect(refused.error?.code == .permissionDenied, "\(refused)")

            // A trusted app's reporting, with the backend's tokens: stop 1 done, its task closed with its outcome.
            let trusted = DeliveryVehicleReporter(
                client: backend,
                deliveryVehicleID: "van-1",
                stops: route,
                clock: ManualClock()
            )
            var trustedReports = trusted.results.makeAsyncIterator()
            async let trustedReporting: Void = trusted.run()
            trusted.arrived()
            trusted.completeStop(overrides: ["t-2": .failed])
            trusted.finish()
            var sent: [DeliveryVehicleReporterState.Update] = []
            while let report = await trustedReports.next() {
                #expect(report.isAccepted, "\(report)")
                sent.append(report.update)
            }
            await trustedReporting
            #expect(sent.last == .outcome(taskID: "t-2", .failed))
            let closed = try await backend.getTask("t-2")
            #expect(closed["state"] == "CLOSED" && closed["taskOutcome"] == "FAILED")

            consumerClock.advance(by: .seconds(5))
            let nearer = try #require(try await shipments.next())
            #expect(nearer.remainingStopCount == 1 && nearer.vehicleLocation?.latitude == 51.499)

            // The last stop removed: parcel-1's task closes and the tracker's stream ends with it.
            try await backend.updateStops("van-1", [])
            try await backend.setTaskOutcome("t-1", .succeeded)
            consumerClock.advance(by: .seconds(5))
            let delivered = try #require(try await shipments.next())
            #expect(delivered.isFinished && delivered.outcome == .succeeded)
            #expect(try await shipments.next() == nil)

            reporter.finish()
            await reporting
        }
    }
}
