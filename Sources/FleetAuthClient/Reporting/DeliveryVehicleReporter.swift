import FleetAuthCore
import Foundation

/// A delivery driver app's reporting: hand it locations as they come and tell it as the driver sets off, arrives
/// and completes stops; it sends the route (UpdateDeliveryVehicle with the remaining stops, which closes the tasks of
/// a completed stop), then each task's outcome (UpdateTask), and the newest location at most once per interval,
/// keeping at it through outages of the token server or Fleet Engine.
///
/// ```swift
/// let reporter = DeliveryVehicleReporter(client: deliveries, deliveryVehicleID: "van-1", stops: route)
/// async let reporting: Void = reporter.run()           // until finish() or cancellation
/// reporter.report(location)
/// reporter.arrived()                                   // the next stop: ARRIVED
/// reporter.completeStop(overrides: ["parcel-7": .failed])
/// reporter.finish()                                    // the pending route and outcomes go out, then run() returns
/// ```
///
/// Every call carries the vehicle's token (`.deliveryVehicle(id)`): a trusted driver's may write stops and tasks; an
/// untrusted driver's only the location, so with one the route and outcome updates end as terminal failures in
/// ``results`` and the backend keeps the route. The decisions are ``DeliveryVehicleReporterState``'s.
public final class DeliveryVehicleReporter<C: Clock>: @unchecked Sendable where C.Duration == Duration {
    /// How one call ended.
    public struct Report: Sendable, Hashable {
        public var update: DeliveryVehicleReporterState.Update
        /// Why it failed; `nil` when Fleet Engine accepted it.
        public var error: FleetEngineClientError?
        public var latency: Duration

        public var isAccepted: Bool { error == nil }
    }

    public let deliveryVehicleID: String
    /// The time between location updates, within ``VehicleReporter/intervalRange``.
    public let interval: Duration
    /// Every call's outcome, in order; finishes when ``run()`` returns.
    public let results: AsyncStream<Report>

    private let client: DeliveriesClient
    private let clock: C
    private let continuation: AsyncStream<Report>.Continuation
    private let lock = NSLock()
    private var state: DeliveryVehicleReporterState
    private let wake = WakeSignal()
    private let once = RunOnce()

    /// - Parameters:
    ///   - client: the Deliveries client (its token provider supplies the vehicle's driver tokens).
    ///   - deliveryVehicleID: the vehicle this app drives.
    ///   - stops: the route as it stands in Fleet Engine (the backend's plan), or empty.
    ///   - interval: the time between location updates, clamped to 5–60 s.
    ///   - clock: the clock the interval runs on.
    public init(
        client: DeliveriesClient,
        deliveryVehicleID: String,
        stops: [DeliveryStop] = [],
        interval: Duration = .seconds(10),
        clock: C
    ) {
        self.client = client
        self.deliveryVehicleID = deliveryVehicleID
        let range = VehicleReporter<C>.intervalRange
        self.interval = min(max(interval, range.lowerBound), range.upperBound)
        self.clock = clock
        state = DeliveryVehicleReporterState(interval: self.interval, stops: stops)
        (results, continuation) = AsyncStream.makeStream(of: Report.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// The remaining stops as this app last set them.
    public var stops: [DeliveryStop] { lock.withLock { state.stops } }

    /// A new location; it replaces any not yet sent.
    public func report(_ location: VehicleLocation) { change { $0.location(location) } }

    /// A new route: every remaining stop.
    public func setStops(_ stops: [DeliveryStop]) { change { $0.setStops(stops) } }

    /// The driver set off for the next stop.
    public func enroute() { change { $0.enroute() } }

    /// The driver reached the next stop.
    public func arrived() { change { $0.arrived() } }

    /// The driver is done at the next stop: it leaves the route and its tasks get `outcome` (or their override).
    /// Returns the stop's task IDs.
    @discardableResult
    public func completeStop(outcome: TaskOutcome = .succeeded, overrides: [String: TaskOutcome] = [:]) -> [String] {
        let done = lock.withLock { state.completeStop(outcome: outcome, overrides: overrides) }
        wake.signal()
        return done
    }

    /// Makes ``run()`` return once the pending route and outcomes have been sent.
    public func finish() { change { $0.finish() } }

    /// Sends updates until ``finish()`` has been honoured or the task is cancelled, then finishes ``results``.
    /// Call it once: a second call returns at once.
    public func run() async {
        guard once.claim() else { return }
        defer { continuation.finish() }
        await runReporting(
            clock: clock,
            wake: wake,
            next: { now in lock.withLock { state.next(now: now) } },
            send: { update throws(FleetEngineClientError) in try await send(update) },
            completed: { update, outcome, now in lock.withLock { state.completed(update, outcome: outcome, at: now) } },
            report: { update, failure, latency in
                continuation.yield(Report(update: update, error: failure, latency: latency))
            }
        )
    }

    private func send(_ update: DeliveryVehicleReporterState.Update) async throws(FleetEngineClientError) {
        let context = AuthorizationContext.deliveryVehicle(deliveryVehicleID)
        switch update {
        case .stops(let stops, _):
            try await client.updateStops(deliveryVehicleID, stops, context: context)
        case .outcome(let taskID, let outcome):
            try await client.setTaskOutcome(taskID, outcome, context: context)
        case .location(let location, _):
            try await client.updateDeliveryVehicleLocation(deliveryVehicleID, location: location)
        }
    }

    private func change(_ body: (inout DeliveryVehicleReporterState) -> Void) {
        lock.withLock { body(&state) }
        wake.signal()
    }
}

extension DeliveryVehicleReporter where C == ContinuousClock {
    /// A reporter on the system's monotonic clock.
    public convenience init(
        client: DeliveriesClient,
        deliveryVehicleID: String,
        stops: [DeliveryStop] = [],
        interval: Duration = .seconds(10)
    ) {
        self.init(
            client: client,
            deliveryVehicleID: deliveryVehicleID,
            stops: stops,
            interval: interval,
            clock: ContinuousClock()
        )
    }
}
