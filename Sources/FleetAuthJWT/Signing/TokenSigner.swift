/// Signs the bytes of a token as one service account, with RS256.
///
/// ``LocalKeySigner`` signs with a key file's private key and names the key in the header (`kid`). A signer
/// backed by IAM `signBlob` (which Google's Java library uses on Cloud Run and GKE) would return `nil` for
/// ``keyID``: Fleet Engine then tries every public key of the service account.
public protocol TokenSigner: Sendable {
    /// The service account's email: the token's `iss` and `sub`.
    var serviceAccountEmail: String { get }
    /// The `kid` header value, or `nil` to send no `kid`.
    var keyID: String? { get }
    /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `signingInput`.
    func sign(_ signingInput: [UInt8]) async throws -> [UInt8]
}
