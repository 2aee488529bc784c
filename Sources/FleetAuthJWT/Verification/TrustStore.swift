/// The service accounts a verifier trusts, and the public keys of each.
///
/// A key is bound to the issuer (the service account's email) it was registered for: a token is checked only
/// against the keys of the service account named in its `iss` (RFC 8725 §3.8), and its `kid` is looked up among
/// those keys alone.
public struct TrustStore: Sendable {
    private var keysByIssuer: [String: [RSAVerificationKey]] = [:]
    private var anyIssuerKeys: [RSAVerificationKey] = []

    /// An empty store.
    public init() {}

    /// A store that trusts each key file's service account with the key file's public key.
    public init(serviceAccountKeys: [ServiceAccountKey]) {
        for key in serviceAccountKeys {
            add(key.verificationKey, issuer: key.clientEmail)
        }
    }

    /// Trusts `key` for tokens whose `iss` is `issuer`. A key with the same `kid` replaces the earlier one.
    public mutating func add(_ key: RSAVerificationKey, issuer: String) {
        var keys = keysByIssuer[issuer] ?? []
        if let kid = key.keyID, let index = keys.firstIndex(where: { $0.keyID == kid }) {
            keys[index] = key
        } else {
            keys.append(key)
        }
        keysByIssuer[issuer] = keys
    }

    /// Trusts each of `keys` for tokens whose `iss` is `issuer`.
    public mutating func add(_ keys: [RSAVerificationKey], issuer: String) {
        for key in keys {
            add(key, issuer: issuer)
        }
    }

    /// Trusts `keys` for tokens of **any** issuer. This gives up the key–issuer binding; it exists for tools that
    /// are handed a bare JWK set (`fleetauth token verify --jwks`) and must not be used by a server.
    public mutating func addForAnyIssuer(_ keys: [RSAVerificationKey]) {
        anyIssuerKeys.append(contentsOf: keys)
    }

    /// Stops trusting `issuer`.
    public mutating func remove(issuer: String) {
        keysByIssuer[issuer] = nil
    }

    /// The emails of the trusted service accounts.
    public var issuers: [String] { keysByIssuer.keys.sorted() }

    /// The keys that may verify a token from `issuer`, or `nil` when the issuer is not trusted.
    public func keys(forIssuer issuer: String) -> [RSAVerificationKey]? {
        if let keys = keysByIssuer[issuer] {
            return anyIssuerKeys.isEmpty ? keys : keys + anyIssuerKeys
        }
        return anyIssuerKeys.isEmpty ? nil : anyIssuerKeys
    }
}
