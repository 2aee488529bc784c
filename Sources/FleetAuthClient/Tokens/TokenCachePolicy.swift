/// When a ``CachingTokenProvider`` refreshes, and how it backs off.
public struct TokenCachePolicy: Sendable, Hashable {
    /// Start a background refresh when less than this is left. Default 10 minutes (the Android samples').
    public var refreshMargin: Duration
    /// Never hand out a token with this or less left. Default 5 minutes (the Driver and Consumer SDK contract).
    public var minimumLifetime: Duration
    /// The first retry delay after a failed fetch.
    public var initialBackoff: Duration
    /// The longest retry delay.
    public var maximumBackoff: Duration

    public init(
        refreshMargin: Duration = .seconds(600),
        minimumLifetime: Duration = .seconds(300),
        initialBackoff: Duration = .seconds(1),
        maximumBackoff: Duration = .seconds(60)
    ) {
        self.refreshMargin = refreshMargin
        self.minimumLifetime = minimumLifetime
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// The delay before retrying after `failures` consecutive failures: doubling from ``initialBackoff``, capped
    /// at ``maximumBackoff``, then scaled by `jitter` (the provider draws it between 0.5 and 1, so many clients that
    /// failed together do not retry together). With the defaults:
    ///
    /// | failures | before jitter | after jitter |
    /// |---:|---:|---:|
    /// | 1 | 1 s | 0.5–1 s |
    /// | 2 | 2 s | 1–2 s |
    /// | 3 | 4 s | 2–4 s |
    /// | 4 | 8 s | 4–8 s |
    /// | 5 | 16 s | 8–16 s |
    /// | 6 | 32 s | 16–32 s |
    /// | 7 and more | 60 s | 30–60 s |
    public func retryDelay(afterFailures failures: Int, jitter: Double) -> Duration {
        let doubled = initialBackoff * (1 << min(max(failures - 1, 0), 20))
        return min(doubled, maximumBackoff) * min(max(jitter, 0), 1)
    }
}
