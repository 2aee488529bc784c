public import FleetAuthJWT
public import FleetAuthServerSupport
import Foundation

/// Refetches the JWK sets of accounts whose keys come from a URL, when a token names a key the emulator does not
/// know yet (a rotation at the token server). At most one fetch per account per ``minimumInterval``, so a flood
/// of tokens with made-up `kid`s costs at most one request per interval.
public actor KeyRefresher {
    /// JWK set URL by service-account email.
    private let urls: [String: String]
    /// The shortest time between two fetches for one account.
    public let minimumInterval: Duration
    private var lastFetch: [String: ContinuousClock.Instant] = [:]
    private let fetch: @Sendable (String) async throws -> [RSAVerificationKey]

    /// - Parameters:
    ///   - urls: the JWK set URL of each account that has one.
    ///   - minimumInterval: the rate limit per account (default 10 s).
    ///   - fetch: how to fetch a set (default: HTTP GET).
    public init(
        urls: [String: String],
        minimumInterval: Duration = .seconds(10),
        fetch: @escaping @Sendable (String) async throws -> [RSAVerificationKey] = TrustConfiguration.fetchKeys(from:)
    ) {
        self.urls = urls
        self.minimumInterval = minimumInterval
        self.fetch = fetch
    }

    /// Fresh keys for `email`, or nil when it has no URL, was fetched too recently, or the fetch failed.
    public func refreshedKeys(for email: String) async -> [RSAVerificationKey]? {
        guard let url = urls[email] else { return nil }
        let now = ContinuousClock.now
        if let last = lastFetch[email], now - last < minimumInterval { return nil }
        lastFetch[email] = now
        return try? await fetch(url)
    }
}
