import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import Logging

/// A whole-token signer whose every answer is checked before it is used: its RS256 signature must verify against the
/// signing account's published keys (for IAM `signJwt`, the JWK set Google publishes for the account). A token signed
/// by another key, or with garbage as its signature, is `invalid_response`, so it never reaches an app or the audit
/// log.
///
/// The keys are read through ``KeyRefetcher`` from `keysURL` when first needed, and again when a token names a
/// `kid` they do not have, at most once per `minimumInterval` on the injected clock; a set that cannot be read is
/// `unavailable` (and logged by the refetcher).
struct VerifiedSigner: TokenSigner {
    let base: any TokenSigner
    let keysURL: String
    private let keys: PublishedKeys

    var serviceAccountEmail: String { base.serviceAccountEmail }

    init(
        _ base: any TokenSigner,
        keysURL: String,
        minimumInterval: Duration = .seconds(10),
        clock: any WallClock,
        logger: Logger = Logger(label: "fleetauth.token-server.keys")
    ) {
        self.base = base
        self.keysURL = keysURL
        self.keys = PublishedKeys(
            KeyRefetcher(
                source: keysURL,
                minimumInterval: minimumInterval,
                clock: clock,
                logger: logger,
                failure:
                    "cannot fetch a signing account's published keys; its tokens are refused until they can be read"
            ) { try await TrustConfiguration.fetchKeys(from: keysURL) }
        )
    }

    func signToken(payload: [UInt8]) async throws -> String {
        let jwt = try await base.signToken(payload: payload)
        let what = "The token signed for \(serviceAccountEmail)"
        let jws: CompactJWS
        do {
            jws = try CompactJWS(jwt)
        } catch {
            throw SigningError.invalidResponse("\(what) is not a compact JWS.")
        }
        guard let kid = jws.keyID else {
            throw SigningError.invalidResponse("\(what) has no kid; it cannot be checked against the account's keys.")
        }
        guard let key = try await keys.key(kid, url: keysURL) else {
            throw SigningError.invalidResponse(
                "\(what) names key \(kid.prefix(64)), which \(keysURL) does not publish."
            )
        }
        guard jws.withSigningInput({ key.isValidRS256Signature(jws.signature, for: $0) }) else {
            throw SigningError.invalidResponse(
                "\(what): its signature does not verify against the account's published key \(kid.prefix(64))."
            )
        }
        return jwt
    }
}

/// The keys last read for one account.
private actor PublishedKeys {
    private let refetcher: KeyRefetcher<[RSAVerificationKey]>
    private var keys: [RSAVerificationKey]?

    init(_ refetcher: KeyRefetcher<[RSAVerificationKey]>) {
        self.refetcher = refetcher
    }

    /// The key with `kid`: from the keys read, or after a read (the first, or a due refetch for an unknown `kid`).
    func key(_ kid: String, url: String) async throws(SigningError) -> RSAVerificationKey? {
        if let key = keys?.first(where: { $0.keyID == kid }) { return key }
        let fetched = keys == nil ? await refetcher.fetch() : await refetcher.fetchIfDue()
        if let fetched { keys = fetched }
        guard let keys else { throw .unavailable("The published keys at \(url) cannot be read.") }
        return keys.first { $0.keyID == kid }
    }
}
