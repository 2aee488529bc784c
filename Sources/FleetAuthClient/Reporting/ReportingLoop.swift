import Foundation

/// What a reporter's state machine asks for next (``VehicleReporterState/Action``,
/// ``DeliveryVehicleReporterState/Action``).
public enum ReporterAction<Update: Sendable & Hashable>: Sendable, Hashable {
    /// Send this update now, then tell the state how it went (its `completed(_:outcome:at:)`).
    case send(Update)
    /// Nothing to send before this time (or before new input, when `nil`).
    case wait(until: Duration?)
    /// Everything that had to go out went: stop.
    case finish
}

/// How a send a reporter's state machine asked for ended.
public enum ReporterOutcome: Sendable, Hashable {
    case accepted
    case transientFailure
    case terminalFailure
}

/// The loop both reporters run until their state says finish or the task is cancelled: ask the state (under the
/// reporter's lock, in `next`), wait or send, tell the state how the send ended (`completed`), and hand the result to
/// `report` with the send's latency. A send cancelled under it ends the loop without a report.
func runReporting<Update: Sendable & Hashable, C: Clock<Duration>>(
    clock: C,
    wake: WakeSignal,
    next: (Duration) -> ReporterAction<Update>,
    send: (Update) async throws(FleetEngineClientError) -> Void,
    completed: (Update, ReporterOutcome, Duration) -> Void,
    report: (Update, FleetEngineClientError?, Duration) -> Void
) async {
    let start = clock.now
    while !Task.isCancelled {
        switch next(start.duration(to: clock.now)) {
        case .finish:
            return
        case .wait(let until):
            await wake.pause(until: until.map { start.advanced(by: $0) }, clock: clock)
        case .send(let update):
            let began = ContinuousClock.now
            var failure: FleetEngineClientError?
            do {
                try await send(update)
            } catch {
                failure = error
            }
            if failure?.code == .cancelled { return }
            let outcome =
                failure.map { $0.isTransient ? .transientFailure : .terminalFailure } ?? ReporterOutcome.accepted
            completed(update, outcome, start.duration(to: clock.now))
            report(update, failure, .now - began)
        }
    }
}

/// Lets one caller through, the first: a reporter's `run()` loops in one task, and a second call returns at once.
final class RunOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var claimed = false

    /// `true` for the first call only.
    func claim() -> Bool {
        lock.withLock {
            defer { claimed = true }
            return !claimed
        }
    }
}
