public import FleetAuthCore
public import Foundation

/// A clock that moves only when a test tells it to, so time-dependent code runs without sleeping.
///
/// It is also a `WallClock`: its ``currentDate`` starts at the date given (by default the real
/// time when the clock was made) and moves with it, so one clock drives a client's monotonic timing and a
/// server's token times alike.
///
/// `sleep(until:)` suspends until ``advance(by:)`` (or ``advance(to:)``) moves the clock to or past the deadline;
/// a cancelled sleeper throws `CancellationError` at once. ``sleeperCount`` lets a test wait until the code
/// under test has gone to sleep before it advances time.
public final class ManualClock: WallClock, @unchecked Sendable {
    /// A point on the manual clock: the time elapsed since the clock was made.
    public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// Time since the clock's start.
        public var offset: Duration

        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Self { Self(offset: offset + duration) }
        public func duration(to other: Self) -> Duration { other.offset - offset }
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "+\(offset)" }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var startDate: Date
    private var current: Instant
    private var sleepers: [Sleeper] = []
    private var nextID: UInt64 = 0
    /// Sleepers cancelled before they registered (the cancellation handler can run first).
    private var cancelledEarly: Set<UInt64> = []

    /// A clock at `start` (default offset zero) whose wall-clock time at offset zero is `date`.
    public init(start: Instant = Instant(offset: .zero), date: Date = Date()) {
        self.current = start
        self.startDate = date
    }

    public var now: Instant { lock.withLock { current } }
    /// The wall-clock time: the start date plus the time the clock has moved.
    public var currentDate: Date { lock.withLock { startDate.addingTimeInterval(current.offset.timeInterval) } }
    public var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { lock.withLock { sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id: UInt64 = lock.withLock {
            nextID += 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case wait, wake, cancel }
                let outcome: Outcome = lock.withLock {
                    if cancelledEarly.remove(id) != nil { return .cancel }
                    if deadline <= current { return .wake }
                    sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return .wait
                }
                switch outcome {
                case .wait: break
                case .wake: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let cancelled: Sleeper? = lock.withLock {
                guard let index = sleepers.firstIndex(where: { $0.id == id }) else {
                    cancelledEarly.insert(id)
                    return nil
                }
                return sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Steps the time of day by `seconds` (back when negative) without moving the monotonic clock, as an operator
    /// or NTP setting the system clock does: what measures intervals must not notice.
    public func stepDate(by seconds: TimeInterval) {
        lock.withLock { startDate = startDate.addingTimeInterval(seconds) }
    }

    /// Moves the clock forward by `duration` and wakes every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` (never backwards) and wakes every sleeper whose deadline has come.
    public func advance(to instant: Instant) {
        let due: [Sleeper] = lock.withLock {
            if instant > current { current = instant }
            let ready = sleepers.filter { $0.deadline <= current }.sorted { $0.deadline < $1.deadline }
            sleepers.removeAll { $0.deadline <= current }
            return ready
        }
        for sleeper in due {
            sleeper.continuation.resume()
        }
    }
}
