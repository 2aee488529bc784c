import Foundation

/// The driver app's location reporting: hand it locations as they come; it sends UpdateVehicle with the newest one
/// at most once per interval, reports vehicle state changes at once, and keeps trying through outages of the
/// token server or Fleet Engine, catching up with the newest location when they return.
///
/// ```swift
/// let reporter = VehicleReporter(client: client, vehicleID: "vehicle-1")
/// reporter.goOnline()
/// async let reporting: Void = reporter.run()          // until finish() or cancellation
/// for await location in locationUpdates { reporter.report(location) }
/// reporter.finish()                                    // one final OFFLINE update, then run() returns
/// for await report in reporter.results { ... }         // success or failure of every update
/// ```
///
/// The decisions are ``VehicleReporterState``'s; this class adds the clock, the network and the results stream.
/// ``results`` has one consumer and keeps the newest 256 reports if nobody reads it.
public final class VehicleReporter<C: Clock>: @unchecked Sendable where C.Duration == Duration {
    /// How one UpdateVehicle ended.
    public struct Report: Sendable, Hashable {
        /// The location sent, if any.
        public var location: VehicleLocation?
        /// The vehicle state sent, if it changed.
        public var state: VehicleState?
        /// Why it failed; `nil` when Fleet Engine accepted it.
        public var error: FleetEngineClientError?
        /// From the start of the call to its end, token fetch and a 401 retry included.
        public var latency: Duration

        public var isAccepted: Bool { error == nil }
    }

    /// The shortest and longest interval between location updates.
    public static var intervalRange: ClosedRange<Duration> { .seconds(5) ... .seconds(60) }

    public let vehicleID: String
    /// The time between location updates, within ``intervalRange``.
    public let interval: Duration
    /// Every update's outcome, in order; finishes when ``run()`` returns.
    public let results: AsyncStream<Report>

    private let client: FleetEngineClient
    private let clock: C
    private let continuation: AsyncStream<Report>.Continuation
    private let lock = NSLock()
    private var state: VehicleReporterState
    private let wake = WakeSignal()
    private let once = RunOnce()

    /// - Parameters:
    ///   - client: the Fleet Engine client (its token provider supplies the vehicle's driver tokens).
    ///   - vehicleID: the vehicle this app drives.
    ///   - interval: the time between location updates, clamped to 5–60 s.
    ///   - clock: the clock the interval runs on.
    public init(client: FleetEngineClient, vehicleID: String, interval: Duration = .seconds(10), clock: C) {
        self.client = client
        self.vehicleID = vehicleID
        self.interval = min(max(interval, Self.intervalRange.lowerBound), Self.intervalRange.upperBound)
        self.clock = clock
        state = VehicleReporterState(interval: self.interval)
        (results, continuation) = AsyncStream.makeStream(of: Report.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// A new location; it replaces any not yet sent.
    public func report(_ location: VehicleLocation) { change { $0.location(location) } }

    /// Reports every location of `locations` until it ends.
    public func report<S: AsyncSequence>(contentsOf locations: S) async throws where S.Element == VehicleLocation {
        for try await location in locations { report(location) }
    }

    /// The vehicle takes trips: sent at once, with the newest location.
    public func goOnline() { change { $0.setState(.online) } }

    /// The vehicle takes no trips: one update says so at once; locations are held until it goes online again.
    public func goOffline() { change { $0.setState(.offline) } }

    /// Goes offline and makes ``run()`` return once that final update has been sent.
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
            send: { update throws(FleetEngineClientError) in
                try await client.updateVehicleLocation(vehicleID, location: update.location, state: update.state)
            },
            completed: { update, outcome, now in lock.withLock { state.completed(update, outcome: outcome, at: now) } },
            report: { update, failure, latency in
                continuation.yield(
                    Report(location: update.location, state: update.state, error: failure, latency: latency)
                )
            }
        )
    }

    private func change(_ body: (inout VehicleReporterState) -> Void) {
        lock.withLock { body(&state) }
        wake.signal()
    }
}

extension VehicleReporter where C == ContinuousClock {
    /// A reporter on the system's monotonic clock.
    public convenience init(client: FleetEngineClient, vehicleID: String, interval: Duration = .seconds(10)) {
        self.init(client: client, vehicleID: vehicleID, interval: interval, clock: ContinuousClock())
    }
}
