public import FleetAuthCore
public import FleetAuthJWT
public import FleetAuthServerCore
import Foundation
import NIOConcurrencyHelpers

/// Turns an `Authorization: Bearer <JWT>` header into a ``Principal``, as Fleet Engine does before any
/// authorization check: strict verification (`FleetEngineTokenVerifier`), then the trusted account of `iss`.
///
/// Every token problem is the same 401 `UNAUTHENTICATED` body, whatever the reason (no oracle for an attacker,
/// <doc:AuthorizationModel>); the reason code goes to the `onRejection` hook for metrics and logs. A genuine token
/// without `authorization` claims is 403 "JWT does not contain any scopes.", unless its account holds an admin role,
/// whose claims Fleet Engine ignores.
public final class TokenAuthenticator: Sendable {
    /// The message of every 401 for a token that is present but unacceptable.
    public static let invalidCredentialsMessage =
        "Request had invalid authentication credentials. Expected a valid Fleet Engine JWT in the Authorization header."
    /// The message of the 401 for a request without a bearer token.
    public static let missingCredentialsMessage =
        "Request is missing required authentication credential. Expected \"Authorization: Bearer <JWT>\"."

    /// The verifier with its keys and the trusted accounts; its lock is taken before the cache's own, never after.
    private struct Trust {
        var verifier: FleetEngineTokenVerifier
        /// Incremented whenever keys change, so a verification that raced a key change is not cached.
        var keyGeneration: UInt64 = 0
        var accounts: [String: TrustedServiceAccount]
    }

    private let trust: NIOLockedValueBox<Trust>
    private let cache: VerifiedTokenCache
    private let clock: any WallClock
    /// Called with the reason code of every rejected token.
    private let onRejection: (@Sendable (String) -> Void)?
    /// Called with the time each authentication took and whether the token came from the cache.
    private let onAuthentication: (@Sendable (Duration, Bool) -> Void)?

    /// - Parameters:
    ///   - accounts: the trusted accounts, each with the keys its tokens may be signed with.
    ///   - policy: the verification limits (Fleet Engine's by default).
    ///   - cacheCapacity: how many verified tokens to remember (0 turns the cache off).
    ///   - clock: the clock for the token's time rules.
    ///   - onRejection: called with the reason code of every rejected token (for metrics and logs).
    ///   - onAuthentication: called with the duration of every token check and whether the cache answered it.
    public init(
        accounts: [(TrustedServiceAccount, [RSAVerificationKey])],
        policy: FleetEngineTokenVerifier.Policy = .init(),
        cacheCapacity: Int = 100_000,
        clock: any WallClock = .system,
        onRejection: (@Sendable (String) -> Void)? = nil,
        onAuthentication: (@Sendable (Duration, Bool) -> Void)? = nil
    ) {
        self.onRejection = onRejection
        self.onAuthentication = onAuthentication
        var store = TrustStore()
        var byEmail: [String: TrustedServiceAccount] = [:]
        for (account, keys) in accounts {
            store.add(keys, issuer: account.email)
            byEmail[account.email] = account
        }
        var verifier = FleetEngineTokenVerifier(trustStore: store, policy: policy)
        verifier.issuersWithoutScopes = Set(byEmail.values.filter(\.mayOmitClaims).map(\.email))
        self.trust = NIOLockedValueBox(Trust(verifier: verifier, accounts: byEmail))
        self.cache = VerifiedTokenCache(capacity: max(cacheCapacity, 1))
        self.cacheEnabled = cacheCapacity > 0
        self.clock = clock
    }

    private let cacheEnabled: Bool

    /// The trusted accounts holding no key now (their JWK set could not be fetched yet), sorted: none of their
    /// tokens can be verified.
    public var accountsWithoutKeys: [String] {
        trust.withLockedValue { trust in
            trust.accounts.keys.filter { trust.verifier.trustStore.keys(forIssuer: $0)?.isEmpty ?? true }.sorted()
        }
    }

    /// Replaces the keys of `email` (key rotation, a refreshed JWK set). Cached tokens are forgotten.
    public func replaceKeys(_ keys: [RSAVerificationKey], for email: String) {
        trust.withLockedValue { trust in
            trust.verifier.trustStore.remove(issuer: email)
            trust.verifier.trustStore.add(keys, issuer: email)
            trust.keyGeneration += 1
            cache.removeAll()
        }
    }

    /// The principal behind `authorization` (the header's value), or the error Fleet Engine would answer.
    public func authenticate(authorization: String?) throws(GoogleAPIError) -> Principal {
        try authenticate(authorization: authorization, rejected: { self.onRejection?($0) })
    }

    /// ``authenticate(authorization:)``, telling `rejected` the reason of a rejected token (once).
    func authenticate(
        authorization: String?,
        rejected: (String) -> Void
    ) throws(GoogleAPIError) -> Principal {
        guard let authorization, let token = Self.bearerToken(authorization) else {
            throw .unauthenticated(Self.missingCredentialsMessage)
        }
        let nowSeconds = clock.currentEpochSeconds
        let started = ContinuousClock.now
        let verified: VerifiedToken
        if cacheEnabled, let cached = cache.lookup(token, now: nowSeconds) {
            verified = cached
            onAuthentication?(ContinuousClock.now - started, true)
        } else {
            let (current, generation) = trust.withLockedValue { ($0.verifier, $0.keyGeneration) }
            do {
                verified = try current.verify(token, nowSeconds: nowSeconds)
            } catch {
                rejected(error.code.rawValue)
                if error.isPermissionDenied { throw .permissionDenied(error.message) }
                throw .unauthenticated(Self.invalidCredentialsMessage)
            }
            if cacheEnabled {
                // Only if the keys did not change while this token was being verified.
                trust.withLockedValue { trust in
                    if trust.keyGeneration == generation { cache.insert(token, verified: verified, now: nowSeconds) }
                }
            }
            onAuthentication?(ContinuousClock.now - started, false)
        }
        guard let account = trust.withLockedValue({ $0.accounts[verified.claims.issuer] }) else {
            // Trust changed between verification and lookup.
            throw .unauthenticated(Self.invalidCredentialsMessage)
        }
        return Principal(account: account, claims: verified.authorization, token: verified)
    }

    /// Like ``authenticate(authorization:)``, but when the token names a `kid` its issuer does not have and the
    /// issuer's keys come from a URL, refetches them once (rate-limited by `refresher`) and tries again. A token whose
    /// `kid` is already known (a forged signature under a real key ID) never causes a fetch; each refused request is
    /// reported to `onRejection` once, with the reason of its last try.
    /// `rejected`, when given, is told the same reason too (the request log's decision).
    public func authenticate(
        authorization: String?,
        refresher: KeyRefresher?,
        rejected: (String) -> Void = { _ in }
    ) async throws(GoogleAPIError) -> Principal {
        func report(_ reason: String) {
            onRejection?(reason)
            rejected(reason)
        }
        guard let refresher else { return try authenticate(authorization: authorization, rejected: report) }
        var reason: String?
        do {
            return try authenticate(authorization: authorization, rejected: { reason = $0 })
        } catch {
            guard error.code == .unauthenticated, let authorization, let token = Self.bearerToken(authorization),
                let jws = try? CompactJWS(token), let kid = jws.keyID,
                case .string(let issuer)? = (try? jws.payloadObject())?["iss"],
                trust.withLockedValue({ trust in
                    trust.accounts[issuer] != nil
                        && !(trust.verifier.trustStore.keys(forIssuer: issuer)?.contains { $0.keyID == kid } ?? false)
                }),
                let keys = await refresher.refreshedKeys(for: issuer)
            else {
                if let reason { report(reason) }
                throw error
            }
            let known = trust.withLockedValue { $0.verifier.trustStore.keys(forIssuer: issuer)?.map(\.keyID) ?? [] }
            if keys.map(\.keyID) != known { replaceKeys(keys, for: issuer) }
            return try authenticate(authorization: authorization, rejected: report)
        }
    }

    /// The trusted account `email`, if any.
    package func account(_ email: String) -> TrustedServiceAccount? {
        trust.withLockedValue { $0.accounts[email] }
    }

    /// The token of a `Bearer` credential (scheme case-insensitive, one space), or nil.
    static func bearerToken(_ header: String) -> String? {
        let prefix = "bearer "
        guard header.utf8.count > prefix.utf8.count,
            header.utf8.prefix(prefix.utf8.count).map({ $0 | 0x20 }).elementsEqual(prefix.utf8)
        else { return nil }
        let token = header.utf8.dropFirst(prefix.utf8.count)
        return token.isEmpty ? nil : String(Substring(token))
    }

    /// How many verified tokens are cached.
    public var cachedTokenCount: Int { cache.count }
}
