import FleetAuthClient
import FleetAuthCore
import FleetAuthStack
import Foundation

extension DemoRun {
    /// The security half of the chain: what must be refused is refused, with the right status.
    func chainChecks(drivers: [App], consumers: [App]) async throws -> [DemoCheck] {
        var checks: [DemoCheck] = []
        guard let driver = drivers.first, let vehicle = scenario.vehicles.first else { return checks }
        // A driver's token names its own vehicle only: using it on another vehicle is 403 from Fleet Engine.
        if let other = scenario.vehicles.dropFirst().first {
            var refused: FleetEngineClientError?
            do {
                try await driver.client.updateVehicle(
                    other.id,
                    ["lastLocation": .object(VehicleLocation(latitude: 37.7, longitude: -122.4).jsonObject)],
                    updateMask: ["last_location"],
                    context: .vehicle(vehicle.id)
                )
            } catch { refused = error }
            checks.append(
                DemoCheck(
                    "a driver token for \(vehicle.id) cannot update \(other.id) (403)",
                    refused?.code == .permissionDenied
                )
            )
        }
        // The token server hands out tokens only for granted resources.
        if let consumer = consumers.first {
            var refused: FleetEngineClientError?
            do { _ = try await consumer.client.getTrip("not-my-trip") } catch { refused = error }
            checks.append(
                DemoCheck(
                    "the token server refuses a token for an ungranted trip (403)",
                    refused?.tokenError?.httpStatus == 403
                )
            )
        }
        // A token with a forged signature is 401; the client retries once with a fresh token, which also fails.
        let real = try await driver.client.tokens.token(for: .vehicle(vehicle.id))
        var parts = real.split(separator: ".").map(String.init)
        parts[2] = (parts[2].hasPrefix("A") ? "B" : "A") + parts[2].dropFirst()
        let metrics = self.metrics
        let forger = FleetEngineClient(
            providerID: endpoints.project,
            tokens: FixedTokenProvider(token: parts.joined(separator: ".")),
            baseURL: URL(string: endpoints.emulatorURL)!,
            onExchange: { metrics.exchange(app: "forger", $0) }
        )
        var rejected: FleetEngineClientError?
        do { _ = try await forger.getVehicle(vehicle.id) } catch { rejected = error }
        let row = metrics.row(app: "forger", context: .vehicle(vehicle.id))
        checks.append(
            DemoCheck(
                "a forged signature is 401, retried once with a new token",
                rejected?.code == .unauthenticated && row.unauthorized == 2
            )
        )
        return checks
    }

    /// The working half: every update accepted, every trip followed to the end, tokens cached.
    func outcomeChecks(_ outcome: DemoOutcome, dispatcher: App) async throws -> [DemoCheck] {
        var checks: [DemoCheck] = []
        let counters = metrics.counters
        checks.append(
            DemoCheck(
                "every location update was accepted (\(counters.accepted)/\(counters.sent))",
                counters.sent > 0 && counters.accepted == counters.sent
            )
        )
        var finalStates = true
        for driver in outcome.drivers {
            let vehicle = try await dispatcher.client.getVehicle(driver.vehicleID, context: AuthorizationContext())
            let stored = vehicle["lastLocation"]?.objectValue.flatMap(VehicleLocation.init(json:))
            if vehicle["vehicleState"] != "OFFLINE" || stored?.latitude != driver.lastLocation?.latitude
                || stored?.longitude != driver.lastLocation?.longitude
            {
                finalStates = false
            }
        }
        checks.append(
            DemoCheck(
                "every driver finished its trips before the run ended",
                outcome.drivers.allSatisfy { $0.tripsDone == $0.tripsPlanned }
            )
        )
        checks.append(DemoCheck("every vehicle ends OFFLINE at its last reported location", finalStates))
        let trips = scenario.trips.count
        checks.append(
            DemoCheck(
                "every consumer followed its trip to COMPLETE (\(counters.finished)/\(trips))",
                outcome.consumers.allSatisfy { $0.error == nil && $0.statuses.last == .complete }
                    && counters.finished == trips
            )
        )
        checks.append(
            DemoCheck(
                "every consumer saw its vehicle's location and remaining waypoints",
                outcome.consumers.allSatisfy { $0.sawVehicle && $0.sawWaypoints }
            )
        )
        // Cached tokens: a context fetches once, then again only as each token nears expiry (every 5 simulated
        // minutes with 15-minute tokens and the 10-minute margin).
        let simulated = Double(scenario.simulatedDuration.components.seconds)
        let allowed = Int(simulated / Double(DemoScenario.tokenLifetime - 600)) + 2
        let rows = metrics.table().filter { $0.0.app != "total" && $0.0.app != "forger" && $0.1.requests > 0 }
        checks.append(
            DemoCheck(
                "every context fetched 1–\(allowed) tokens, reusing each until near expiry",
                rows.allSatisfy { $0.1.tokenFetches >= 1 && $0.1.tokenFetches <= allowed }
            )
        )
        let unexpected = rows.reduce(0) { $0 + $1.1.unauthorized + $1.1.otherFailures }
        checks.append(DemoCheck("no unexpected 401 or failed request (\(unexpected))", unexpected == 0))
        return checks
    }
}

/// Hands out one token, whatever happens (the demo's forger).
struct FixedTokenProvider: FleetTokenProvider {
    let token: String
    func token(for context: AuthorizationContext) async throws -> String { token }
    func invalidate(_ token: String, for context: AuthorizationContext) {}
}
