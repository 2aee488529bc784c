public import FleetAuthCore
public import FleetAuthJWT
import Foundation

/// The local stand-in for Google's IAM Credentials API and metadata server, so the keyless path (a token server
/// that signs through IAM and holds no key) runs on a laptop and in CI. It is for local use only: it hands an
/// access token to anyone who asks its metadata route, so it is off unless asked for
/// (`fleetauth emulator --iam-port`, `fleetauth serve --keyless`) and served on a listener of its own that binds
/// loopback only (``EmulatorServer/iamApplication(host:port:logger:onServerRunning:)``).
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
/// Who may sign as whom follows Google's model: the runtime identity holds
/// `roles/iam.serviceAccountTokenCreator` only on the accounts named in ``signableAccounts`` (the accounts a token
/// server is allowed to act as). The sign methods need an access token this server issued (401 otherwise); an
/// account that is not granted (the Fleet Engine role accounts the emulator provisions for its own tests, say), or
/// does not exist at all, is 403 with IAM's message, which does not tell the two apart. `signJwt` refuses a payload that is not a
/// JSON object, and an `exp` that is not an integer, is in the past, or is more than 12 hours ahead, as IAM does; a
/// payload over ``maximumPayloadSize`` bytes is refused by both methods.
public struct LocalIAM: Sendable {
    /// The accounts whose keys are held, by email.
    public let keys: [String: ServiceAccountKey]
    /// The metadata server's (runtime) service account.
    public let runtimeServiceAccount: String
    /// The accounts the runtime identity may sign as: those it is granted `roles/iam.serviceAccountTokenCreator` on.
    public let signableAccounts: Set<String>
    /// How long issued access tokens last.
    public let accessTokenLifetime: Int64 = 3600
    /// The largest `signJwt` claims or `signBlob` bytes accepted (a Fleet Engine token's claims take under 1 KiB).
    public static let maximumPayloadSize = 16 * 1024
    let certificates: [String: SelfSignedCertificate]
    let issued: IssuedAccessTokens
    let clock: any WallClock

    /// Holds `keys` (with a self-signed certificate each, for the x509 route).
    ///
    /// - Parameters:
    ///   - keys: the service-account keys held (their public keys are published).
    ///   - signableAccounts: the emails among `keys` the runtime identity may sign as; an email not held is an
    ///     error.
    ///   - runtimeServiceAccount: the email the metadata server answers for (default: `fleetauth-runtime@PROJECT…`
    ///     in the first key's project).
    ///   - clock: issue and expiry times of access tokens, and the certificates' validity.
    public init(
        keys: [ServiceAccountKey],
        signableAccounts: Set<String>,
        runtimeServiceAccount: String? = nil,
        clock: any WallClock = .system
    ) async throws(LocalIAMError) {
        var byEmail: [String: ServiceAccountKey] = [:]
        var certificates: [String: SelfSignedCertificate] = [:]
        let now = clock.currentDate
        for key in keys {
            byEmail[key.clientEmail] = key
            let signer = LocalKeySigner(key: key)
            do {
                certificates[key.clientEmail] = try await SelfSignedCertificate.make(
                    publicKey: key.verificationKey,
                    commonName: key.clientEmail,
                    notBefore: Date(epochSeconds: now.epochSeconds - 60),
                    notAfter: Date(epochSeconds: now.epochSeconds + 10 * 365 * 86400)
                ) { tbs in try signer.signSynchronously(tbs) }
            } catch {
                throw LocalIAMError("cannot make a certificate for \(key.clientEmail): \(error)")
            }
        }
        for email in signableAccounts.sorted() where byEmail[email] == nil {
            throw LocalIAMError(
                "cannot sign as \(email): its key file is not held (name it in the trust file with a keyFile)"
            )
        }
        self.keys = byEmail
        self.certificates = certificates
        self.signableAccounts = signableAccounts
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

    /// Whether an address is loopback (`127.0.0.0/8`, `::1`, `localhost`): the only addresses the stand-ins bind.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in UInt8(part).map { String($0) == part } ?? false }
    }
}

/// The stand-ins cannot start as configured: an account to sign as whose key is not held, or a listener address
/// that is not loopback.
public struct LocalIAMError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
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
