/// The delivery vehicle reporter's decisions, without I/O: what to send next and when, given the locations, route
/// changes and task outcomes it was handed and how earlier sends ended. Times are offsets from the reporter's start.
///
/// - Route first: a change of the remaining stops (arriving, completing a stop, a new route) is sent at once, the
///   newest route winning over any unsent one; completing a stop removes it, which closes its tasks.
/// - Outcomes next: each task outcome is sent once, after the route change that closed its task was accepted (Fleet
///   Engine records outcomes of closed tasks).
/// - Locations last: only the newest unsent one is kept; one is sent at most once per interval.
/// - Failures: after a transient one nothing is sent for an interval, then the same update (or a newer one) is
///   tried again; after a terminal one (403 for an untrusted driver's stops, 400, 404) that update is dropped.
/// - Finishing: the pending route and outcomes go out, then the reporter ends.
public struct DeliveryVehicleReporterState: Sendable, Hashable {
    /// One call to send.
    public enum Update: Sendable, Hashable {
        /// UpdateDeliveryVehicle with the remaining stops; `revision` identifies the route.
        case stops([DeliveryStop], revision: Int)
        /// UpdateTask with the task's outcome.
        case outcome(taskID: String, TaskOutcome)
        /// UpdateDeliveryVehicle with the last location; `sequence` identifies it (1 for the first handed in).
        case location(VehicleLocation, sequence: Int)
    }

    /// What to do next: send an update (then call ``DeliveryVehicleReporterState/completed(_:outcome:at:)``), wait, or stop.
    public typealias Action = ReporterAction<Update>
    /// How a send ended.
    public typealias Outcome = ReporterOutcome

    private struct PendingOutcome: Sendable, Hashable {
        var taskID: String
        var outcome: TaskOutcome
        /// The route revision that closed the task: sent once that revision is settled.
        var afterRevision: Int
    }

    /// The time between location updates, and the wait after a transient failure.
    public let interval: Duration
    /// The remaining stops as the driver holds them.
    public private(set) var stops: [DeliveryStop] = []
    private var revision = 0
    /// The newest revision accepted or dropped.
    private var settledRevision = 0
    private var outcomes: [PendingOutcome] = []
    private struct PendingLocation: Sendable, Hashable {
        var sequence: Int
        var location: VehicleLocation
    }

    private var location: PendingLocation?
    private var lastSequence = 0
    private var lastLocationAttempt: Duration?
    private var retryAt: Duration?
    private var inFlight = false
    public private(set) var isFinishing = false

    public init(interval: Duration, stops: [DeliveryStop] = []) {
        self.interval = interval
        self.stops = stops
    }

    /// A new location; it replaces any unsent one.
    public mutating func location(_ location: VehicleLocation) {
        lastSequence += 1
        self.location = PendingLocation(sequence: lastSequence, location: location)
    }

    /// A new route: every remaining stop, in order.
    public mutating func setStops(_ stops: [DeliveryStop]) {
        self.stops = stops
        revision += 1
    }

    /// The driver set off for the next stop.
    public mutating func enroute() { setFirstStop(.enroute) }

    /// The driver reached the next stop.
    public mutating func arrived() { setFirstStop(.arrived) }

    private mutating func setFirstStop(_ state: DeliveryStop.State) {
        guard !stops.isEmpty, stops[0].state != state else { return }
        var route = stops
        route[0].state = state
        setStops(route)
    }

    /// The driver is done at the next stop: it leaves the route (closing its tasks), and each of its tasks gets
    /// `outcome`, or the one `overrides` gives it. Returns the stop's task IDs (none when no stop remains).
    @discardableResult
    public mutating func completeStop(outcome: TaskOutcome = .succeeded, overrides: [String: TaskOutcome] = [:])
        -> [String]
    {
        guard let done = stops.first else { return [] }
        setStops(Array(stops.dropFirst()))
        for taskID in done.taskIDs {
            outcomes.append(
                PendingOutcome(taskID: taskID, outcome: overrides[taskID] ?? outcome, afterRevision: revision)
            )
        }
        return done.taskIDs
    }

    /// Send the pending route and outcomes, then finish.
    public mutating func finish() { isFinishing = true }

    /// What to do at time `now`.
    public mutating func next(now: Duration) -> Action {
        if inFlight { return .wait(until: nil) }
        if let retryAt, now < retryAt { return .wait(until: retryAt) }
        if revision > settledRevision { return begin(.stops(stops, revision: revision)) }
        if let ready = outcomes.first(where: { $0.afterRevision <= settledRevision }) {
            return begin(.outcome(taskID: ready.taskID, ready.outcome))
        }
        if isFinishing { return outcomes.isEmpty ? .finish : .wait(until: nil) }
        guard let location else { return .wait(until: nil) }
        if let last = lastLocationAttempt, now < last + interval { return .wait(until: last + interval) }
        lastLocationAttempt = now
        return begin(.location(location.location, sequence: location.sequence))
    }

    private mutating func begin(_ update: Update) -> Action {
        inFlight = true
        return .send(update)
    }

    /// How the send of `update` ended.
    public mutating func completed(_ update: Update, outcome: Outcome, at now: Duration) {
        inFlight = false
        retryAt = outcome == .transientFailure ? now + interval : nil
        guard outcome != .transientFailure else { return }
        switch update {
        case .stops(_, let sent):
            settledRevision = max(settledRevision, sent)
        case .outcome(let taskID, _):
            outcomes.removeAll { $0.taskID == taskID }
        case .location(_, let sequence):
            if location?.sequence == sequence { location = nil }
        }
    }
}
