public import FleetAuthCore

/// A shipment tracking page's view of one parcel: polls GetTaskTrackingInfo with the tracking ID's token and yields
/// a snapshot whenever it changed, until the shipment's task is CLOSED.
///
/// ```swift
/// let tracker = ShipmentTracker(client: DeliveriesClient(client), trackingID: "parcel-42")
/// for try await shipment in tracker.snapshots() {
///     show(shipment.vehicleLocation, shipment.remainingStopCount, shipment.estimatedArrival)
/// }   // ends after the CLOSED snapshot
/// ```
///
/// Failures are handled as ``TripTracker``'s are: transient ones retried at the interval and passed to `onFailure`,
/// any other (403 for another consumer's parcel, 404) ends the stream with that ``FleetEngineClientError``.
public struct ShipmentTracker<C: Clock>: Sendable where C.Duration == Duration {
    /// The shortest interval between polls.
    public static var minimumInterval: Duration { .seconds(5) }

    public let trackingID: String
    /// The time between polls, at least ``minimumInterval``.
    public let interval: Duration
    /// Whose token the polls carry: the tracking ID's own unless told otherwise.
    public let context: AuthorizationContext
    private let client: DeliveriesClient
    private let clock: C
    private let onFailure: (@Sendable (FleetEngineClientError) -> Void)?

    /// - Parameters:
    ///   - client: the Deliveries client (its token provider supplies delivery consumer tokens).
    ///   - trackingID: the shipment to follow.
    ///   - interval: the time between polls (at least 5 s).
    ///   - context: whose token to send (default `.tracking(trackingID)`).
    ///   - clock: the clock the interval runs on.
    ///   - onFailure: called with every transient failure that is being retried.
    public init(
        client: DeliveriesClient,
        trackingID: String,
        interval: Duration = .seconds(5),
        context: AuthorizationContext? = nil,
        clock: C,
        onFailure: (@Sendable (FleetEngineClientError) -> Void)? = nil
    ) {
        self.client = client
        self.trackingID = trackingID
        self.interval = max(interval, Self.minimumInterval)
        self.context = context ?? .tracking(trackingID)
        self.clock = clock
        self.onFailure = onFailure
    }

    /// The shipment's snapshots: the first poll's at once, then each that differs; the last one is the closed
    /// task's.
    public func snapshots() -> AsyncThrowingStream<ShipmentSnapshot, any Error> {
        let (client, trackingID, context) = (self.client, self.trackingID, self.context)
        return SnapshotPoller(
            clock: clock,
            interval: interval,
            fetch: { () async throws(FleetEngineClientError) in
                try await client.getTaskTrackingInfo(trackingID, context: context)
            },
            isFinished: \.isFinished,
            onFailure: onFailure
        ).stream()
    }
}

extension ShipmentTracker where C == ContinuousClock {
    /// A tracker on the system's monotonic clock.
    public init(
        client: DeliveriesClient,
        trackingID: String,
        interval: Duration = .seconds(5),
        context: AuthorizationContext? = nil,
        onFailure: (@Sendable (FleetEngineClientError) -> Void)? = nil
    ) {
        self.init(
            client: client,
            trackingID: trackingID,
            interval: interval,
            context: context,
            clock: ContinuousClock(),
            onFailure: onFailure
        )
    }
}
