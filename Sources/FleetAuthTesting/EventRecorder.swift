import Foundation

/// Records events that code under test reports from any thread, and lets a test wait for them without polling
/// or sleeping: ``wait(until:)`` suspends until the recorded events satisfy a condition, checked now and again
/// after every new event.
///
/// ```swift
/// let events = EventRecorder<TokenProviderEvent>()
/// let provider = CachingTokenProvider(fetcher: fetcher, clock: clock) { events.record($0) }
/// ...
/// await events.wait { $0.contains(.invalidated(context)) }
/// ```
public final class EventRecorder<Event: Sendable>: @unchecked Sendable {
    private struct Waiter {
        let condition: @Sendable ([Event]) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private let lock = NSLock()
    private var recorded: [Event] = []
    private var waiters: [Waiter] = []

    public init() {}

    /// Every event so far, in order.
    public var events: [Event] { lock.withLock { recorded } }

    /// Records `event` and wakes the waiters whose condition now holds.
    public func record(_ event: Event) {
        let ready: [Waiter] = lock.withLock {
            recorded.append(event)
            let events = recorded
            let (met, unmet) = waiters.reduce(into: ([Waiter](), [Waiter]())) { split, waiter in
                if waiter.condition(events) { split.0.append(waiter) } else { split.1.append(waiter) }
            }
            waiters = unmet
            return met
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `condition` holds for the recorded events.
    public func wait(until condition: @escaping @Sendable ([Event]) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let met: Bool = lock.withLock {
                if condition(recorded) { return true }
                waiters.append(Waiter(condition: condition, continuation: continuation))
                return false
            }
            if met { continuation.resume() }
        }
    }
}
