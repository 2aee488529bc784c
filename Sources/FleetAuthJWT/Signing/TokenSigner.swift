import FleetAuthCore

/// Signs Fleet Engine tokens as one service account.
///
/// Two kinds of signer sit behind this protocol:
/// - signers that compute an RS256 signature over the bytes the minter prepares (``RS256Signer``: a local key file,
///   ``LocalKeySigner``, or a key inside a PKCS#11 token, ``PKCS11Signer``);
/// - signers that are handed the claims and answer a whole compact JWT, with a header of their choosing (Google's
///   IAM `signJwt`, where Google picks the key and writes its `kid`).
///
/// ``FleetEngineTokenMinter`` accepts both; what a whole-token signer answers is checked before it is used: the
/// header must say RS256 and the payload must carry exactly the claims that were sent.
public protocol TokenSigner: Sendable {
    /// The service account's email: the token's `iss` and `sub`.
    var serviceAccountEmail: String { get }

    /// Signs a token whose claims set is `payload` (JSON, as the minter serialized it) and answers the compact JWT.
    func signToken(payload: [UInt8]) async throws -> String
}

/// A signer that computes RSASSA-PKCS1-v1_5 SHA-256 signatures; the minter writes the header
/// (`{"alg":"RS256","typ":"JWT","kid":…}`) itself.
public protocol RS256Signer: TokenSigner {
    /// The `kid` header value, or `nil` to send no `kid` (Fleet Engine then tries every key of the account).
    var keyID: String? { get }
    /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `signingInput`.
    func sign(_ signingInput: [UInt8]) async throws -> [UInt8]
}

extension RS256Signer {
    /// The compact JWT: the RS256 header with ``keyID``, `payload`, and the signature of both.
    public func signToken(payload: [UInt8]) async throws -> String {
        var signingInput = Array(Base64URL.encode(JWSHeaderEncoding.rs256(keyID: keyID)).utf8)
        signingInput.append(UInt8(ascii: "."))
        signingInput.append(contentsOf: Base64URL.encode(payload).utf8)
        let signature = try await sign(signingInput)
        return String(decoding: signingInput, as: UTF8.self) + "." + Base64URL.encode(signature)
    }
}

/// The RS256 header every FleetAuth signer writes.
enum JWSHeaderEncoding {
    static func rs256(keyID: String?) -> [UInt8] {
        var header = JSONObject()
        header["alg"] = "RS256"
        header["typ"] = "JWT"
        if let keyID { header["kid"] = .string(keyID) }
        return header.jsonBytes
    }
}
