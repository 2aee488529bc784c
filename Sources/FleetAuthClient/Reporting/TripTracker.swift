public import FleetAuthCore

/// The consumer app's view of one trip: polls GetTrip with the trip's token and yields a snapshot whenever it
/// changed, until the trip completes or is cancelled.
///
/// ```swift
/// let tracker = TripTracker(client: client, tripID: "trip-1")
/// for try await snapshot in tracker.snapshots() {
///     show(snapshot.status, snapshot.vehicleLocation, snapshot.remainingWaypoints)
/// }   // ends after the COMPLETE or CANCELED snapshot
/// ```
///
/// Transient failures (Fleet Engine or the token endpoint unreachable, 5xx, 429) are retried at the interval and
/// passed to `onFailure`; any other failure (403 when the trip is not the user's, 404) ends the stream with that
/// ``FleetEngineClientError``. Cancelling the consuming task ends the stream quietly. Polling runs in the task
/// that iterates: nothing runs in the background.
public struct TripTracker<C: Clock>: Sendable where C.Duration == Duration {
    /// The shortest interval between polls.
    public static var minimumInterval: Duration { .seconds(5) }

    public let tripID: String
    /// The time between polls, at least ``minimumInterval``.
    public let interval: Duration
    /// Whose token the polls carry: the trip's own unless told otherwise.
    public let context: AuthorizationContext
    private let client: FleetEngineClient
    private let clock: C
    private let onFailure: (@Sendable (FleetEngineClientError) -> Void)?

    /// - Parameters:
    ///   - client: the Fleet Engine client (its token provider supplies trip tokens).
    ///   - tripID: the trip to follow.
    ///   - interval: the time between polls (at least 5 s).
    ///   - context: whose token to send (default `.trip(tripID)`).
    ///   - clock: the clock the interval runs on.
    ///   - onFailure: called with every transient failure that is being retried.
    public init(
        client: FleetEngineClient,
        tripID: String,
        interval: Duration = .seconds(5),
        context: AuthorizationContext? = nil,
        clock: C,
        onFailure: (@Sendable (FleetEngineClientError) -> Void)? = nil
    ) {
        self.client = client
        self.tripID = tripID
        self.interval = max(interval, Self.minimumInterval)
        self.context = context ?? .trip(tripID)
        self.clock = clock
        self.onFailure = onFailure
    }

    /// The trip's snapshots: the first poll's at once, then each that differs from the one before; the last one
    /// is the finished trip's.
    public func snapshots() -> AsyncThrowingStream<TripSnapshot, any Error> {
        let (client, tripID, context) = (self.client, self.tripID, self.context)
        return SnapshotPoller(
            clock: clock,
            interval: interval,
            fetch: { () async throws(FleetEngineClientError) in try await client.getTrip(tripID, context: context) },
            isFinished: \.isFinished,
            onFailure: onFailure
        ).stream()
    }
}

extension TripTracker where C == ContinuousClock {
    /// A tracker on the system's monotonic clock.
    public init(
        client: FleetEngineClient,
        tripID: String,
        interval: Duration = .seconds(5),
        context: AuthorizationContext? = nil,
        onFailure: (@Sendable (FleetEngineClientError) -> Void)? = nil
    ) {
        self.init(
            client: client,
            tripID: tripID,
            interval: interval,
            context: context,
            clock: ContinuousClock(),
            onFailure: onFailure
        )
    }
}
