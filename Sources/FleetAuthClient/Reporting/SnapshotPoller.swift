/// The polling behind ``TripTracker`` and ``ShipmentTracker``: fetch a snapshot every interval (from the previous
/// fetch's start, however slow the consumer is), yield it when it differs from the one before, end after a finished
/// one. Transient failures are reported and retried at the interval; any other failure ends the stream with it;
/// cancellation ends it quietly.
actor SnapshotPoller<Snapshot: Sendable & Equatable, C: Clock> where C.Duration == Duration {
    let clock: C
    let interval: Duration
    let fetch: @Sendable () async throws(FleetEngineClientError) -> Snapshot
    let isFinished: @Sendable (Snapshot) -> Bool
    let onFailure: (@Sendable (FleetEngineClientError) -> Void)?
    private var previous: Snapshot?
    private var finished = false
    private var lastPoll: C.Instant?

    init(
        clock: C,
        interval: Duration,
        fetch: @escaping @Sendable () async throws(FleetEngineClientError) -> Snapshot,
        isFinished: @escaping @Sendable (Snapshot) -> Bool,
        onFailure: (@Sendable (FleetEngineClientError) -> Void)?
    ) {
        self.clock = clock
        self.interval = interval
        self.fetch = fetch
        self.isFinished = isFinished
        self.onFailure = onFailure
    }

    /// The stream of snapshots.
    nonisolated func stream() -> AsyncThrowingStream<Snapshot, any Error> {
        AsyncThrowingStream { try await self.next() }
    }

    func next() async throws -> Snapshot? {
        while !finished {
            if let lastPoll {
                do {
                    try await clock.sleep(until: lastPoll.advanced(by: interval), tolerance: nil)
                } catch {
                    return nil
                }
            }
            lastPoll = clock.now
            let snapshot: Snapshot
            do {
                snapshot = try await fetch()
            } catch  where error.code == .cancelled {
                return nil
            } catch  where error.isTransient {
                onFailure?(error)
                continue
            } catch {
                finished = true
                throw error
            }
            finished = isFinished(snapshot)
            if snapshot != previous {
                previous = snapshot
                return snapshot
            }
        }
        return nil
    }
}
