import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One OpenID Provider's signing keys: read from its discovery document's `jwks_uri`, kept in memory, fetched
/// again when they are older than ``maximumAge`` (at most once per ``minimumInterval``; while none could be read yet,
/// once a second), and when a token names a `kid` they do not have — a rotation: at most once per
/// ``minimumInterval`` too, so a flood of tokens with made-up `kid`s costs the provider one request per interval.
/// Concurrent refreshes share one fetch. A fetch that fails keeps the keys already known (none before the first
/// success: every ID token of the issuer is refused) and logs one error line.
actor OpenIDKeySource {
    let provider: OpenIDProviderConfiguration
    let maximumAge: Duration
    private let logger: Logger
    /// Time since this source was made, on the injected clock (monotonic on the system clock).
    private let elapsed: @Sendable () -> Duration
    private let refetcher: KeyRefetcher<(keys: [SignatureVerificationKey], skipped: [String])>
    private var keys: [SignatureVerificationKey] = []
    private var fetchedAt: Duration?
    private var lastUnknownKeyRefetch: Duration?

    var minimumInterval: Duration { refetcher.minimumInterval }

    init(
        provider: OpenIDProviderConfiguration,
        minimumInterval: Duration,
        maximumAge: Duration,
        clock: any WallClock,
        logger: Logger
    ) {
        self.provider = provider
        self.maximumAge = maximumAge
        self.elapsed = Self.stopwatch(clock)
        self.logger = logger
        self.refetcher = KeyRefetcher(
            source: provider.issuer,
            minimumInterval: minimumInterval,
            clock: clock,
            logger: logger,
            failure: "cannot fetch the OpenID Provider's signing keys; its ID tokens are refused until they can be read"
        ) { try await Self.fetchKeys(provider) }
    }

    private static func stopwatch<C: WallClock>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// The keys, refreshed first when there are none yet or they are older than ``maximumAge``; `fetched` tells
    /// whether a fetch was just tried (so an unknown `kid` is not worth another).
    func currentKeys() async -> (keys: [SignatureVerificationKey], fetched: Bool) {
        var fetched = false
        if fetchedAt.map({ elapsed() - $0 >= maximumAge }) ?? true {
            let interval = keys.isEmpty ? min(minimumInterval, .seconds(1)) : minimumInterval
            if await refetcher.sinceLastFetch.map({ $0 >= interval }) ?? true {
                _ = await fetch()
                fetched = true
            }
        }
        return (keys, fetched)
    }

    /// Fetches the keys at once (at start); whether new keys were read.
    func refresh() async -> Bool { await fetch() }

    /// Fetches the keys because a token named a `kid` they do not have, unless that was done within
    /// ``minimumInterval``; whether new keys were read.
    func refreshAfterMiss() async -> Bool {
        let now = elapsed()
        if let lastUnknownKeyRefetch, now - lastUnknownKeyRefetch < minimumInterval { return false }
        lastUnknownKeyRefetch = now
        return await fetch()
    }

    /// Fetches (or joins the fetch in flight) and keeps what it read; a failure (logged by the refetcher) keeps
    /// the keys already known.
    private func fetch() async -> Bool {
        guard let result = await refetcher.fetch() else { return false }
        keys = result.keys
        fetchedAt = elapsed()
        for reason in result.skipped {
            logger.debug(
                "skipped a key of the OpenID Provider",
                metadata: .fleetauth([
                    "issuer": .string(provider.issuer),
                    "reason": .string(reason),
                ])
            )
        }
        return true
    }

    /// The number of keys held now.
    var keyCount: Int { keys.count }

    /// Reads the discovery document (its `issuer` must be the configured one, byte for byte), then the JWK set at
    /// its `jwks_uri` (https, or http on loopback).
    static func fetchKeys(
        _ provider: OpenIDProviderConfiguration
    ) async throws -> (keys: [SignatureVerificationKey], skipped: [String]) {
        let discovery = try await getJSON(provider.discoveryURL, what: "discovery document")
        guard case .string(let issuer)? = discovery["issuer"], issuer.hasSameBytes(as: provider.issuer) else {
            throw OpenIDFetchError(
                "the discovery document at \(provider.discoveryURL) names another issuer "
                    + "(\(discovery["issuer"]?.stringValue?.prefix(200) ?? "none"))"
            )
        }
        guard case .string(let keySetURL)? = discovery["jwks_uri"] else {
            throw OpenIDFetchError("the discovery document at \(provider.discoveryURL) has no jwks_uri")
        }
        guard OpenIDProviderConfiguration.isAllowedURL(keySetURL) else {
            throw OpenIDFetchError("jwks_uri \(keySetURL.prefix(200)) is not https (or http on loopback)")
        }
        let bytes = try await get(keySetURL, what: "JWK set")
        do {
            let result = try JSONWebKeySet(json: bytes).signatureVerificationKeys()
            guard !result.keys.isEmpty else {
                throw OpenIDFetchError(
                    "the JWK set at \(keySetURL) has no RS256 or ES256 signing key"
                        + (result.skipped.isEmpty ? "" : " (\(result.skipped.joined(separator: "; ")))")
                )
            }
            return result
        } catch let error as KeyError {
            throw OpenIDFetchError("the JWK set at \(keySetURL): \(error.message)")
        }
    }

    /// The largest document read from a provider.
    static let maximumDocumentSize = 512 * 1024

    private static func getJSON(_ location: String, what: String) async throws -> JSONObject {
        let bytes = try await get(location, what: what)
        do {
            return try StrictJSONParser().parseObject(bytes)
        } catch {
            throw OpenIDFetchError("the \(what) at \(location) is not a JSON object: \(error.message)")
        }
    }

    private static func get(_ location: String, what: String) async throws -> [UInt8] {
        guard let url = URL(string: location) else { throw OpenIDFetchError("\(location) is not a URL") }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.cancellationSafeData(for: request)
        } catch {
            throw OpenIDFetchError("cannot fetch the \(what) at \(location): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw OpenIDFetchError("the \(what) at \(location) answered \(status), not 200") }
        guard data.count <= maximumDocumentSize else {
            throw OpenIDFetchError("the \(what) at \(location) is over \(maximumDocumentSize / 1024) KiB")
        }
        return Array(data)
    }
}

/// Why a provider's keys could not be read.
struct OpenIDFetchError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
