public import FleetAuthCore
public import FleetAuthJWT
public import FleetAuthServerCore
import Foundation
public import Logging

/// The OpenID Providers whose ID tokens log app users in (`POST /v1/sessions {"idToken": …}`), and how an ID
/// token is checked against them.
///
/// The token's unverified `iss` chooses the provider (an unknown issuer is refused before any key is fetched);
/// `IDTokenVerifier` (FleetAuthJWT) then checks it with that provider's keys. A `kid` the keys do not have makes one
/// rate-limited refetch of the provider's JWK set (a rotation), and the token is checked once more.
public final class OpenIDFederation: Sendable {
    /// The configured providers, in order.
    public let providers: [OpenIDProviderConfiguration]
    /// The role of a user created at the first login of an identity no user is linked to; nil: such a login is
    /// refused like a wrong password.
    public let autoCreateRole: AppUserRole?
    private let sources: [(issuer: String, audiences: [String], source: OpenIDKeySource)]

    /// - Parameters:
    ///   - providers: issuer and audience pairs; one issuer may be named with several audiences.
    ///   - autoCreateRole: `driver` or `consumer`, or nil.
    ///   - minimumRefetchInterval: the rate limit of JWK set fetches per issuer (default 10 s).
    ///   - maximumKeyAge: how long keys are used before they are fetched again (default 1 hour).
    ///   - clock: what measures the two durations above.
    ///   - logger: where fetch failures are logged (one error line each).
    public init(
        providers: [OpenIDProviderConfiguration],
        autoCreateRole: AppUserRole? = nil,
        minimumRefetchInterval: Duration = .seconds(10),
        maximumKeyAge: Duration = .seconds(3600),
        clock: any WallClock = .system,
        logger: Logger = .silent(label: "fleetauth.token-server.oidc")
    ) throws(GoogleAPIError) {
        for provider in providers { try provider.validate() }
        if let autoCreateRole, autoCreateRole != .driver, autoCreateRole != .consumer {
            throw .invalidArgument("Users created at their first OpenID login may be drivers or consumers only.")
        }
        var sources: [(issuer: String, audiences: [String], source: OpenIDKeySource)] = []
        for provider in providers {
            if let index = sources.firstIndex(where: { $0.issuer.hasSameBytes(as: provider.issuer) }) {
                sources[index].audiences.append(provider.audience)
            } else {
                sources.append(
                    (
                        provider.issuer, [provider.audience],
                        OpenIDKeySource(
                            provider: provider,
                            minimumInterval: minimumRefetchInterval,
                            maximumAge: maximumKeyAge,
                            clock: clock,
                            logger: logger
                        )
                    )
                )
            }
        }
        self.providers = providers
        self.autoCreateRole = autoCreateRole
        self.sources = sources
    }

    /// Whether exactly one issuer is configured: links made without an issuer then name it.
    public var hasSingleIssuer: Bool { sources.count == 1 }

    /// Fetches every provider's keys once (at start, so a misconfiguration shows at once); returns each issuer
    /// with the number of signing keys read (0 when its keys could not be fetched; the error is logged).
    public func prefetch() async -> [(issuer: String, keys: Int)] {
        var result: [(issuer: String, keys: Int)] = []
        for entry in sources {
            _ = await entry.source.refresh()
            result.append((entry.issuer, await entry.source.keyCount))
        }
        return result
    }

    /// Each provider's issuer with the number of signing keys held now (nothing is fetched).
    public func keyCounts() async -> [(issuer: String, keys: Int)] {
        var result: [(issuer: String, keys: Int)] = []
        for entry in sources { result.append((entry.issuer, await entry.source.keyCount)) }
        return result
    }

    /// The verified claims of `idToken` at `nowSeconds`, or why it was refused.
    public func verify(_ idToken: String, nowSeconds: Int64) async throws(TokenVerificationError) -> VerifiedIDToken {
        guard idToken.utf8.count <= CompactJWS.defaultMaximumLength else {
            throw .tokenTooLarge
        }
        let claimedIssuer = IDTokenVerifier.unverifiedIssuer(of: idToken)
        guard let claimedIssuer, let entry = sources.first(where: { $0.issuer.hasSameBytes(as: claimedIssuer) })
        else {
            // Decoding again reports a malformed token as such; a well-formed one names an unknown issuer.
            _ = try IDTokenVerifier(issuer: "", audiences: []).verify(idToken, keys: [], nowSeconds: nowSeconds)
            throw .unknownIssuer
        }
        let verifier = IDTokenVerifier(issuer: entry.issuer, audiences: entry.audiences)
        let (keys, fetched) = await entry.source.currentKeys()
        do {
            return try verifier.verify(idToken, keys: keys, nowSeconds: nowSeconds)
        } catch  where error.code == .unknownKeyID && !fetched {
            // A rotation. (A bad signature under a known kid is not one: a provider never reuses a kid, and
            // refetching for it would let forged tokens spend the refetch budget a real rotation needs.)
            guard await entry.source.refreshAfterMiss() else { throw error }
            return try verifier.verify(idToken, keys: await entry.source.currentKeys().keys, nowSeconds: nowSeconds)
        }
    }
}
