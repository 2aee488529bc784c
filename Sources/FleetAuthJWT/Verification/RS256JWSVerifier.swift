public import FleetAuthCore

/// Verifies a compact JWS with RS256 against a fixed set of keys, without reading the payload as claims.
///
/// It applies the same decoding and header rules as ``FleetEngineTokenVerifier`` (see `JWSHeaderPolicy`);
/// the payload may be any non-empty bytes. Use it for JWS that are not Fleet Engine tokens, and to run JWS
/// test vectors.
public struct RS256JWSVerifier: Sendable {
    /// The keys to try.
    public let keys: [RSAVerificationKey]
    /// The largest token accepted, in bytes.
    public var maximumTokenLength: Int

    public init(keys: [RSAVerificationKey], maximumTokenLength: Int = CompactJWS.defaultMaximumLength) {
        self.keys = keys
        self.maximumTokenLength = maximumTokenLength
    }

    /// The decoded JWS if its signature verifies; throws the reason otherwise.
    public func verify(_ token: String) throws(TokenVerificationError) -> CompactJWS {
        let jws = try JWSHeaderPolicy.decode(token, maximumLength: maximumTokenLength)
        let keyID = try JWSHeaderPolicy.check(jws.header)
        _ = try JWSHeaderPolicy.verifySignature(of: jws, keyID: keyID, candidates: keys)
        return jws
    }
}
