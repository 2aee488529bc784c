public import FleetAuthCore
public import FleetAuthJWT
public import FleetAuthServerCore
import Foundation
public import Logging

/// Refetches the JWK sets of accounts whose keys come from a URL, when a token names a key the emulator does not
/// know yet (a rotation at the token server). At most one fetch per account per ``minimumInterval``, on the
/// injected clock, so a flood of tokens with made-up `kid`s costs at most one request per interval; tokens
/// arriving during a fetch share it. A failed fetch is logged (at `error`, with the URL) and changes nothing.
public struct KeyRefresher: Sendable {
    /// The shortest time between two fetches for one account.
    public let minimumInterval: Duration
    /// The refetcher of each account that has a JWK set URL, by service-account email.
    private let refetchers: [String: KeyRefetcher<[RSAVerificationKey]>]

    /// - Parameters:
    ///   - urls: the JWK set URL of each account that has one.
    ///   - minimumInterval: the rate limit per account (default 10 s).
    ///   - clock: the clock the interval is measured on.
    ///   - logger: where failed fetches are logged.
    ///   - fetch: how to fetch a set (default: HTTP GET).
    public init(
        urls: [String: String],
        minimumInterval: Duration = .seconds(10),
        clock: any WallClock = .system,
        logger: Logger = Logger(label: "fleetauth.emulator.keys"),
        fetch: @escaping @Sendable (String) async throws -> [RSAVerificationKey] = TrustConfiguration.fetchKeys(from:)
    ) {
        self.minimumInterval = minimumInterval
        self.refetchers = urls.mapValues { url in
            KeyRefetcher(
                source: url,
                minimumInterval: minimumInterval,
                clock: clock,
                logger: logger,
                failure:
                    "cannot fetch a trusted service account's JWK set; its new keys are refused until it can be read"
            ) { try await fetch(url) }
        }
    }

    /// Fresh keys for `email`, or nil when it has no URL, was fetched too recently, or the fetch failed.
    public func refreshedKeys(for email: String) async -> [RSAVerificationKey]? {
        await refetchers[email]?.fetchIfDue()
    }
}
