public import Foundation

/// A clock that also tells the time of day.
///
/// Servers need both halves: the wall-clock time for everything compared with times written down elsewhere (a
/// token's `iat` and `exp`, a session's expiry, a key's retirement), and a clock to sleep on for periodic work.
/// One injected clock gives both, so a test moves a whole server through an hour by advancing one clock
/// (`ManualClock` in FleetAuthTesting conforms); ``SystemClock`` is the real one.
public protocol WallClock: Clock, Sendable where Duration == Swift.Duration {
    /// The current wall-clock time.
    var currentDate: Date { get }
}

extension WallClock {
    /// The current wall-clock time in whole seconds since 1970, rounded down: the unit of JWT times.
    public var currentEpochSeconds: Int64 { currentDate.epochSeconds }
}

extension WallClock {
    /// A stopwatch started now: each call tells the seconds passed since on this clock's monotonic half (`now`),
    /// which a step of the time of day does not change. For rates and intervals: a limiter's refill, how far a
    /// pruning cutoff may move.
    public func stopwatch() -> @Sendable () -> Double {
        let origin = now
        return {
            let components = origin.duration(to: self.now).components
            return Double(components.seconds) + Double(components.attoseconds) * 1e-18
        }
    }
}

/// The system's clocks: `Date()` for the time of day, and the continuous monotonic clock to sleep on (so a
/// periodic task keeps its interval when the wall clock is set).
public struct SystemClock: WallClock {
    public typealias Instant = ContinuousClock.Instant

    public init() {}

    public var now: Instant { ContinuousClock.now }
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }
    public var currentDate: Date { Date() }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
    }
}

extension WallClock where Self == SystemClock {
    /// The system's clocks.
    public static var system: SystemClock { SystemClock() }
}
