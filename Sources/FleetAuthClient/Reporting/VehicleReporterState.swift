/// The vehicle reporter's decisions, without I/O: what to send next and when, given the locations and state
/// changes it was handed and how earlier sends ended. Times are offsets from the reporter's start on its clock.
///
/// - Locations: only the newest unsent one is kept ("newest wins"); one is sent at most once per interval.
/// - State: a change (online ↔ offline) is sent at once, with the newest location if there is one. While the
///   vehicle is offline no locations are sent; the newest is kept for when it goes online.
/// - Failures: after a transient one the update stays pending (a newer location replacing it) and is retried after
///   the interval; after a terminal one (403, 400, 404) it is dropped, so a refused update is not repeated.
/// - Finishing: the vehicle goes offline, that final update is sent, then the reporter ends.
public struct VehicleReporterState: Sendable, Hashable {
    /// One UpdateVehicle to send.
    public struct Update: Sendable, Hashable {
        public var location: VehicleLocation?
        public var state: VehicleState?
        /// Which handed-in location this is (1 for the first), to recognise it when the send ends.
        public var locationSequence: Int?
    }

    /// What to do next: send an update (then call ``VehicleReporterState/completed(_:outcome:at:)``), wait, or stop.
    public typealias Action = ReporterAction<Update>
    /// How a send ended.
    public typealias Outcome = ReporterOutcome

    /// The time between location updates.
    public let interval: Duration
    private struct Pending: Sendable, Hashable {
        var sequence: Int
        var location: VehicleLocation
    }

    private var pending: Pending?
    private var lastSequence = 0
    private var desiredState: VehicleState?
    private var reportedState: VehicleState?
    /// A state Fleet Engine refused for good; not sent again until the desired state changes.
    private var refusedState: VehicleState?
    private var lastAttempt: Duration?
    private var lastFailed = false
    private var inFlight = false
    private(set) public var isFinishing = false

    public init(interval: Duration) {
        self.interval = interval
    }

    /// A new location; it replaces any unsent one.
    public mutating func location(_ location: VehicleLocation) {
        lastSequence += 1
        pending = Pending(sequence: lastSequence, location: location)
    }

    /// The vehicle's state from now on.
    public mutating func setState(_ state: VehicleState) {
        if state != desiredState { refusedState = nil }
        desiredState = state
    }

    /// Go offline, send that final update, then finish.
    public mutating func finish() {
        setState(.offline)
        isFinishing = true
    }

    private var stateToSend: VehicleState? {
        guard let desiredState, desiredState != reportedState, desiredState != refusedState else { return nil }
        return desiredState
    }

    /// What to do at time `now`.
    public mutating func next(now: Duration) -> Action {
        if inFlight { return .wait(until: nil) }
        let state = stateToSend
        if isFinishing && state == nil { return .finish }
        let retryAt = lastFailed ? lastAttempt.map { $0 + interval } : nil
        if let state {
            if let retryAt, now < retryAt { return .wait(until: retryAt) }
            return begin(Update(location: pending?.location, state: state, locationSequence: pending?.sequence), now)
        }
        guard desiredState != .offline, let pending else { return .wait(until: nil) }
        if let lastAttempt, now < lastAttempt + interval { return .wait(until: lastAttempt + interval) }
        return begin(Update(location: pending.location, state: nil, locationSequence: pending.sequence), now)
    }

    private mutating func begin(_ update: Update, _ now: Duration) -> Action {
        inFlight = true
        lastAttempt = now
        return .send(update)
    }

    /// How the send of `update` ended.
    public mutating func completed(_ update: Update, outcome: Outcome, at now: Duration) {
        inFlight = false
        lastFailed = outcome != .accepted
        let sameLocation = update.locationSequence != nil && update.locationSequence == pending?.sequence
        switch outcome {
        case .accepted:
            if sameLocation { pending = nil }
            if let state = update.state { reportedState = state }
        case .transientFailure:
            break
        case .terminalFailure:
            if sameLocation { pending = nil }
            if let state = update.state, state == desiredState { refusedState = state }
        }
    }
}
