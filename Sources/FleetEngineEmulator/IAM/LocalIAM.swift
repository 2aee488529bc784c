public import FleetAuthCore
public import FleetAuthJWT
import Foundation

/// The local stack's stand-in for Google's IAM and metadata server, for the service accounts whose key files the
/// emulator holds, so the keyless path (a token server that signs through IAM and holds no key) runs on a laptop
/// and in CI:
///
/// | route | Google's |
/// |---|---|
/// | `GET /computeMetadata/v1/instance/service-accounts/default/token` (`Metadata-Flavor: Google` required) | the metadata server's access token for the runtime's service account |
/// | `GET /computeMetadata/v1/instance/service-accounts/default/` (`?recursive=true`), `…/default/email` | the runtime account's email and scopes |
/// | `POST /v1/projects/-/serviceAccounts/{email}:signJwt` `{"payload"}` → `{"keyId","signedJwt"}` | IAM Credentials `signJwt` |
/// | `POST /v1/projects/-/serviceAccounts/{email}:signBlob` `{"payload"}` (base64) → `{"keyId","signedBlob"}` | IAM Credentials `signBlob` |
/// | `GET /service_accounts/v1/metadata/jwk/{email}` | an account's public keys as a JWK set |
/// | `GET /service_accounts/v1/metadata/x509/{email}` | the same keys as `{"kid": "PEM certificate"}` |
///
/// The sign methods need an access token this server issued (401 otherwise), for an account it holds (404
/// otherwise). The runtime identity may sign as every account held, as if granted
/// `roles/iam.serviceAccountTokenCreator` on each. `signJwt` refuses a payload that is not a JSON object, and an
/// `exp` that is not an integer, is in the past, or is more than 12 hours ahead, as IAM does.
public struct LocalIAM: Sendable {
    /// The accounts whose keys are held, by email.
    public let keys: [String: ServiceAccountKey]
    /// The metadata server's (runtime) service account.
    public let runtimeServiceAccount: String
    /// How long issued access tokens last.
    public let accessTokenLifetime: Int64 = 3600
    let certificates: [String: SelfSignedCertificate]
    let issued: IssuedAccessTokens
    let clock: any WallClock

    /// Holds `keys` (with a self-signed certificate each, for the x509 route).
    ///
    /// - Parameters:
    ///   - keys: the service-account keys to sign with.
    ///   - runtimeServiceAccount: the email the metadata server answers for (default: `fleetauth-runtime@PROJECT…`
    ///     in the first key's project).
    ///   - clock: issue and expiry times of access tokens, and the certificates' validity.
    public init(keys: [ServiceAccountKey], runtimeServiceAccount: String? = nil, clock: any WallClock = .system)
        async throws
    {
        var byEmail: [String: ServiceAccountKey] = [:]
        var certificates: [String: SelfSignedCertificate] = [:]
        let now = clock.currentDate
        for key in keys {
            byEmail[key.clientEmail] = key
            let signer = LocalKeySigner(key: key)
            certificates[key.clientEmail] = try await SelfSignedCertificate.make(
                publicKey: key.verificationKey,
                commonName: key.clientEmail,
                notBefore: Date(epochSeconds: now.epochSeconds - 60),
                notAfter: Date(epochSeconds: now.epochSeconds + 10 * 365 * 86400)
            ) { tbs in try signer.signSynchronously(tbs) }
        }
        self.keys = byEmail
        self.certificates = certificates
        self.runtimeServiceAccount =
            runtimeServiceAccount
            ?? "fleetauth-runtime@\(keys.first?.projectID ?? "demo-project").iam.gserviceaccount.com"
        self.issued = IssuedAccessTokens()
        self.clock = clock
    }

    /// A new access token for the runtime account, with its lifetime in seconds.
    func issueAccessToken() async -> (token: String, expiresIn: Int64) {
        var generator = SystemRandomNumberGenerator()
        let token =
            "ya29.fleetauth-" + Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        await issued.add(token, expiresAt: clock.currentEpochSeconds + accessTokenLifetime)
        return (token, accessTokenLifetime)
    }

    /// Whether `token` was issued here and has not expired.
    func isValid(_ token: String) async -> Bool {
        await issued.isValid(token, now: clock.currentEpochSeconds)
    }
}

/// The access tokens issued, until they expire.
actor IssuedAccessTokens {
    private var expiries: [String: Int64] = [:]

    func add(_ token: String, expiresAt: Int64) {
        expiries[token] = expiresAt
    }

    func isValid(_ token: String, now: Int64) -> Bool {
        guard let expiry = expiries[token] else { return false }
        if expiry <= now {
            expiries[token] = nil
            return false
        }
        if expiries.count > 10_000 { expiries = expiries.filter { $0.value > now } }
        return true
    }
}
