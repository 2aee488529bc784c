/// A clock whose time runs `speed` times faster than the system's monotonic clock: the demo's driver and consumer
/// apps sleep their real intervals (10 s between location updates, 5 s between polls) in a fraction of the time.
struct AcceleratedClock: Clock {
    struct Instant: InstantProtocol {
        /// Simulated time since the clock's start.
        var offset: Duration
        func advanced(by duration: Duration) -> Self { Self(offset: offset + duration) }
        func duration(to other: Self) -> Duration { other.offset - offset }
        static func < (lhs: Self, rhs: Self) -> Bool { lhs.offset < rhs.offset }
    }

    let speed: Double
    private let start: ContinuousClock.Instant

    init(speed: Double, start: ContinuousClock.Instant = .now) {
        self.speed = speed
        self.start = start
    }

    var now: Instant { Instant(offset: (ContinuousClock.now - start) * speed) }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let remaining = now.duration(to: deadline)
        if remaining > .zero { try await Task.sleep(for: remaining / speed) } else { try Task.checkCancellation() }
    }
}
