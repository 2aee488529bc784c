package import FleetAuthCore
package import Logging

/// Fetches one source of keys (a JWK set, an OpenID Provider's keys) on demand, for everyone who asks at once, and
/// not too often: the fetch behind the emulator's rotation pickup and the token server's OpenID login.
///
/// - ``fetch()`` fetches now; callers arriving while a fetch is in flight share it (one request however many
///   wait), and one caller's cancellation does not cancel the fetch for the others.
/// - ``fetchIfDue()`` fetches only if no fetch started within ``minimumInterval`` (or joins the one in flight) — so a flood of tokens naming
///   made-up key IDs costs the source at most one request per interval.
///
/// Time is read from the injected clock. A failed fetch is logged (one line at `error`, naming the source) and
/// answered with nil; what to keep meanwhile is the caller's decision.
package actor KeyRefetcher<Keys: Sendable> {
    /// The shortest time between two fetches started by ``fetchIfDue()``.
    package nonisolated let minimumInterval: Duration
    private let source: String
    private let load: @Sendable () async throws -> Keys
    private let logger: Logger
    private let message: Logger.Message
    /// Time since this refetcher was made, on the injected clock.
    private let elapsed: @Sendable () -> Duration
    private var lastStart: Duration?
    private var inFlight: Task<Keys?, Never>?
    /// How many callers are waiting for the fetch in flight.
    package private(set) var waitingCallers = 0

    /// - Parameters:
    ///   - source: what is fetched (a URL, an issuer), for the log.
    ///   - minimumInterval: the rate limit of ``fetchIfDue()``.
    ///   - clock: the clock intervals are measured on.
    ///   - logger: where a failure is logged.
    ///   - failure: the log message for a failure (the source and the error are metadata).
    ///   - load: the fetch.
    package init(
        source: String,
        minimumInterval: Duration,
        clock: any WallClock,
        logger: Logger,
        failure: Logger.Message = "cannot fetch keys",
        load: @escaping @Sendable () async throws -> Keys
    ) {
        self.source = source
        self.minimumInterval = minimumInterval
        self.elapsed = Self.stopwatch(clock)
        self.logger = logger
        self.message = failure
        self.load = load
    }

    private static func stopwatch<C: WallClock>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// How long ago the last fetch started (nil: never).
    package var sinceLastFetch: Duration? { lastStart.map { elapsed() - $0 } }

    /// Fetches now, or joins the fetch in flight; nil if it failed (logged).
    package func fetch() async -> Keys? {
        waitingCallers += 1
        defer { waitingCallers -= 1 }
        if let inFlight { return await inFlight.value }
        lastStart = elapsed()
        let (load, logger, message, source) = (self.load, self.logger, self.message, self.source)
        // One task per fetch, shared by every caller: one caller's cancellation does not end it for the others.
        let task = Task { () -> Keys? in
            defer { self.inFlight = nil }
            do {
                return try await load()
            } catch {
                logger.error(message, metadata: .fleetauth(["source": .string(source), "error": .string("\(error)")]))
                return nil
            }
        }
        inFlight = task
        return await task.value
    }

    /// Fetches unless a fetch started within ``minimumInterval``; nil if it was too soon or the fetch failed.
    package func fetchIfDue() async -> Keys? {
        if let sinceLastFetch, sinceLastFetch < minimumInterval, inFlight == nil { return nil }
        return await fetch()
    }
}
