public import FleetAuthCore
public import FleetAuthIAM
public import FleetAuthJWT
import Foundation

/// A token family's signer whose private key the token server never holds: Google's IAM (`signJwt`) or a key in a
/// PKCS#11 token (an HSM, Cloud KMS). Such a family has no private key in the data directory or the database.
public struct KeylessSigner: Sendable {
    /// Where the family's public keys are published.
    public enum Publication: Sendable {
        /// By Google, at `{googleKeysURL}/service_accounts/v1/metadata/jwk/{email}` (IAM signs with the account's
        /// Google-managed keys).
        case google(keysURL: String)
        /// By the token server's own JWK set, this key with its `kid` (a PKCS#11 key).
        case tokenServer(RSAVerificationKey)
    }

    /// The signer.
    public let signer: any TokenSigner
    /// `iam` or `pkcs11`: how the family signs, as recorded in the store.
    public let kind: String
    /// The `kid` its tokens carry, when known before signing (PKCS#11); IAM's is Google's choice.
    public let keyID: String?
    /// Where its public keys are published.
    public let publication: Publication

    /// The service account the family signs as.
    public var serviceAccountEmail: String { signer.serviceAccountEmail }

    /// The record key of the family's signer in the store: the PKCS#11 key's `kid`, or `iam:EMAIL`.
    var recordKeyID: String { keyID ?? "\(kind):\(serviceAccountEmail)" }

    /// Google's host for service accounts' public keys.
    public static let googleKeysURL = "https://www.googleapis.com"

    /// Signs through IAM; the public keys are Google's, under `googleKeysURL`, and every token IAM answers is
    /// checked against them before it goes to an app (one signed by another key, or with a garbage signature, is
    /// refused: `VerifiedSigner`), the keys refetched for an unknown `kid` at most every 10 s on `clock`.
    public static func iam(
        _ signer: IAMCredentialsSigner,
        googleKeysURL: String = googleKeysURL,
        clock: any WallClock = .system
    ) -> Self {
        let base = googleKeysURL.hasSuffix("/") ? String(googleKeysURL.dropLast()) : googleKeysURL
        let email =
            signer.serviceAccountEmail.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
            ?? signer.serviceAccountEmail
        return Self(
            signer: VerifiedSigner(signer, keysURL: "\(base)/service_accounts/v1/metadata/jwk/\(email)", clock: clock),
            kind: "iam",
            keyID: nil,
            publication: .google(keysURL: base)
        )
    }

    /// Signs inside a PKCS#11 token; the token server publishes the public key.
    public static func pkcs11(_ signer: PKCS11Signer) -> Self {
        Self(signer: signer, kind: "pkcs11", keyID: signer.keyID, publication: .tokenServer(signer.publicKey))
    }

    /// Any signer (tests, custom key managers), published as `publication`.
    public init(signer: any TokenSigner, kind: String, keyID: String?, publication: Publication) {
        self.signer = signer
        self.kind = kind
        self.keyID = keyID
        self.publication = publication
    }
}
