import FleetAuthClient
import FleetAuthCore
import FleetTokenServer
import Foundation

/// The demo's delivery half: a dispatcher (an operator with delivery server tokens) plans routes of parcels; each
/// courier's app reports its van's location with its own (untrusted) delivery driver tokens while the dispatcher's
/// backend marks stops arrived and completed (closing their tasks) and records outcomes; each recipient's page
/// follows its parcel by tracking ID until its task closes.
extension DemoRun {
    /// One parcel: its task, its tracking ID and where it goes.
    struct Parcel: Sendable {
        var taskID: String
        var trackingID: String
        var destination: Coordinate
        /// Every fifth delivery fails (nobody home).
        var fails: Bool
    }

    /// A recipient's view of its parcel, by the end.
    struct ShipmentOutcome: Sendable {
        var trackingID: String
        var states: [String] = []
        var outcome: TaskOutcome?
        var sawVan = false
        var error: String?
    }

    /// The courier routes: van `i` delivers parcels `i`, `i + vans`, … in order, 400 m apart, going north from a
    /// depot east of the on-demand fleet.
    func deliveryRoutes(vans: Int, shipments: Int) -> [(vanID: String, depot: Coordinate, parcels: [Parcel])] {
        (0..<vans).map { van in
            let depot = DemoScenario.center.offset(north: 0, east: 3_000 + 600 * Double(van))
            let parcels = stride(from: van, to: shipments, by: vans).enumerated().map { stop, index in
                Parcel(
                    taskID: "\(scenario.prefix)task-\(index + 1)",
                    trackingID: "\(scenario.prefix)parcel-\(index + 1)",
                    destination: depot.offset(north: 400 * Double(stop + 1), east: 0),
                    fails: (index + 1) % 5 == 0
                )
            }
            return ("\(scenario.prefix)van-\(van + 1)", depot, parcels)
        }
    }

    /// Runs the delivery half and returns its checks.
    func deliveries(vans: Int, shipments: Int) async throws -> [DemoCheck] {
        guard vans > 0, shipments > 0 else { return [] }
        let clock = AcceleratedClock(speed: speed)
        let routes = deliveryRoutes(vans: vans, shipments: shipments)
        let dispatcher = DeliveriesClient(
            try await app(
                "delivery dispatcher",
                user: scenario.prefix + "delivery-dispatcher",
                role: .operator,
                grants: [],
                endpoint: .deliveryServer
            ).client
        )
        for route in routes {
            let start = VehicleLocation(latitude: route.depot.latitude, longitude: route.depot.longitude)
            try await dispatcher.createDeliveryVehicle(
                route.vanID,
                ["type": "AUTO", "lastLocation": .object(start.jsonObject)]
            )
            try await dispatcher.batchCreateTasks(
                route.parcels.map { parcel in
                    (
                        parcel.taskID,
                        [
                            "type": "DELIVERY", "state": "OPEN", "trackingId": .string(parcel.trackingID),
                            "taskDuration": "120s",
                            "plannedLocation": [
                                "point": [
                                    "latitude": .double(parcel.destination.latitude),
                                    "longitude": .double(parcel.destination.longitude),
                                ]
                            ],
                        ]
                    )
                }
            )
            try await dispatcher.updateStops(route.vanID, Self.stops(route.parcels))
        }
        say("Planned \(routes.count) delivery routes with \(shipments) parcels; couriers and recipients log in.")
        var couriers: [DeliveriesClient] = []
        for route in routes {
            couriers.append(
                DeliveriesClient(
                    try await app(
                        "courier",
                        user: "courier-\(route.vanID)",
                        role: .driver,
                        grants: [Grant(kind: .deliveryVehicle, id: route.vanID)],
                        endpoint: .deliveryDriver
                    ).client
                )
            )
        }
        var recipients: [(Parcel, DeliveriesClient)] = []
        for parcel in routes.flatMap(\.parcels) {
            recipients.append(
                (
                    parcel,
                    DeliveriesClient(
                        try await app(
                            "recipient",
                            user: "recipient-\(parcel.trackingID)",
                            role: .consumer,
                            grants: [Grant(kind: .tracking, id: parcel.trackingID)],
                            endpoint: .deliveryConsumer
                        ).client
                    )
                )
            )
        }
        let deadline = clock.now.advanced(by: scenario.simulatedDuration)
        let shipmentOutcomes = try await withThrowingTaskGroup(of: ShipmentOutcome?.self) { group in
            for (route, courier) in zip(routes, couriers) {
                group.addTask {
                    try await self.drive(route, courier: courier, dispatcher: dispatcher, clock: clock, deadline)
                    return nil
                }
            }
            for (parcel, recipient) in recipients {
                group.addTask { await self.track(parcel.trackingID, recipient, clock: clock, deadline) }
            }
            var outcomes: [ShipmentOutcome] = []
            for try await outcome in group { if let outcome { outcomes.append(outcome) } }
            return outcomes
        }
        return try await deliveryChecks(
            routes: routes,
            couriers: couriers,
            recipients: recipients.map(\.1),
            dispatcher: dispatcher,
            outcomes: shipmentOutcomes
        )
    }

    static func stops(_ parcels: [Parcel]) -> [DeliveryStop] {
        parcels.map {
            DeliveryStop(latitude: $0.destination.latitude, longitude: $0.destination.longitude, taskIDs: [$0.taskID])
        }
    }

    /// A courier's day: drive to each stop reporting the van's location every simulated second (the courier's
    /// reporter sends the newest every 10 s); at each, the backend marks the stop arrived, then completes it.
    private func drive(
        _ route: (vanID: String, depot: Coordinate, parcels: [Parcel]),
        courier: DeliveriesClient,
        dispatcher: DeliveriesClient,
        clock: AcceleratedClock,
        _ deadline: AcceleratedClock.Instant
    ) async throws {
        let locations = DeliveryVehicleReporter(client: courier, deliveryVehicleID: route.vanID, clock: clock)
        let backend = DeliveryVehicleReporter(
            client: dispatcher,
            deliveryVehicleID: route.vanID,
            stops: Self.stops(route.parcels),
            clock: clock
        )
        let metrics = self.metrics
        async let reportingLocations: Void = locations.run()
        async let reportingRoute: Void = backend.run()
        async let results: Void = {
            for await report in locations.results { metrics.update(accepted: report.isAccepted) }
        }()
        var position = route.depot
        for parcel in route.parcels {
            backend.enroute()
            var tick = clock.now
            var arrived = false
            while !arrived, clock.now < deadline {
                let now = clock.now
                let (seconds, attoseconds) = tick.duration(to: now).components
                tick = now
                let step = position.step(
                    towards: parcel.destination,
                    metres: DemoScenario.velocity * max(1, Double(seconds) + Double(attoseconds) / 1e18)
                )
                position = step.position
                arrived = step.arrived
                locations.report(VehicleLocation(latitude: position.latitude, longitude: position.longitude))
                if !arrived { try await clock.sleep(for: .seconds(1)) }
            }
            guard arrived else { break }
            backend.arrived()
            try await clock.sleep(for: .seconds(30))
            backend.completeStop(outcome: parcel.fails ? .failed : .succeeded)
        }
        backend.finish()
        locations.finish()
        await reportingRoute
        await reportingLocations
        await results
    }

    /// A recipient's page: follows its parcel until its task closes (or the run ends).
    private func track(
        _ trackingID: String,
        _ client: DeliveriesClient,
        clock: AcceleratedClock,
        _ deadline: AcceleratedClock.Instant
    ) async -> ShipmentOutcome {
        var outcome = ShipmentOutcome(trackingID: trackingID)
        do {
            for try await shipment in ShipmentTracker(client: client, trackingID: trackingID, clock: clock).snapshots()
            {
                if outcome.states.last != shipment.state { outcome.states.append(shipment.state) }
                if shipment.vehicleLocation != nil { outcome.sawVan = true }
                outcome.outcome = shipment.outcome
                if clock.now > deadline { break }
            }
        } catch {
            outcome.error = "\(error)"
        }
        return outcome
    }

    private func deliveryChecks(
        routes: [(vanID: String, depot: Coordinate, parcels: [Parcel])],
        couriers: [DeliveriesClient],
        recipients: [DeliveriesClient],
        dispatcher: DeliveriesClient,
        outcomes: [ShipmentOutcome]
    ) async throws -> [DemoCheck] {
        var checks: [DemoCheck] = []
        let parcels = routes.flatMap(\.parcels)
        var ended = 0
        for parcel in parcels {
            let task = try await dispatcher.getTask(parcel.taskID)
            let expected = parcel.fails ? "FAILED" : "SUCCEEDED"
            if task["state"] == "CLOSED", task["taskOutcome"]?.stringValue == expected { ended += 1 }
        }
        checks.append(
            DemoCheck(
                "every delivery task ended CLOSED with its outcome (\(ended)/\(parcels.count))",
                ended == parcels.count
            )
        )
        checks.append(
            DemoCheck(
                "every recipient followed its parcel to CLOSED and saw the van on the way",
                outcomes.count == parcels.count
                    && outcomes.allSatisfy { $0.error == nil && $0.states.last == "CLOSED" && $0.sawVan }
            )
        )
        if let courier = couriers.first, let own = routes.first {
            // Fleet Engine refuses a courier's token on another van, and on its own van's stops (an untrusted
            // driver's route is the backend's).
            if let other = routes.dropFirst().first {
                var refused: FleetEngineClientError?
                do {
                    try await courier.updateDeliveryVehicle(
                        other.vanID,
                        ["lastLocation": .object(VehicleLocation(latitude: 37.7, longitude: -122.4).jsonObject)],
                        updateMask: ["last_location"],
                        context: .deliveryVehicle(own.vanID)
                    )
                } catch { refused = error }
                checks.append(
                    DemoCheck(
                        "a courier's token for \(own.vanID) cannot update \(other.vanID) (403)",
                        refused?.code == .permissionDenied
                    )
                )
            }
            var stops: FleetEngineClientError?
            do { try await courier.updateStops(own.vanID, []) } catch { stops = error }
            checks.append(
                DemoCheck(
                    "a courier's (untrusted) token cannot change its van's stops (403)",
                    stops?.code == .permissionDenied
                )
            )
        }
        if let recipient = recipients.first, parcels.count > 1 {
            var refused: FleetEngineClientError?
            do {
                _ = try await recipient.getTaskTrackingInfo(
                    parcels[1].trackingID,
                    context: .tracking(parcels[0].trackingID)
                )
            } catch { refused = error }
            checks.append(
                DemoCheck(
                    "a recipient's token shows its own parcel only (403 for another tracking ID)",
                    refused?.code == .permissionDenied
                )
            )
        }
        return checks
    }
}
