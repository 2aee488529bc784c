public import FleetAuthCore

/// A JWK set, `{"keys":[...]}`.
public struct JSONWebKeySet: Sendable, Hashable {
    /// The keys, in document order.
    public var keys: [JSONWebKey]

    public init(keys: [JSONWebKey]) {
        self.keys = keys
    }

    /// The set of these keys' public halves.
    public init(_ keys: [RSAVerificationKey]) {
        self.keys = keys.map(\.jwk)
    }

    /// Reads a JWK set strictly (UTF-8 JSON, no duplicate names, a `keys` array of objects).
    public init(json bytes: some Collection<UInt8>) throws(KeyError) {
        let object: JSONObject
        do {
            object = try StrictJSONParser().parseObject(bytes)
        } catch {
            throw .invalidJWKSet("is not a strict JSON object: \(error.message)")
        }
        guard case .array(let values)? = object["keys"] else {
            throw .invalidJWKSet("has no \"keys\" array")
        }
        var keys: [JSONWebKey] = []
        for value in values {
            guard case .object(let member) = value else { throw .invalidJWKSet("has a key that is not an object") }
            keys.append(try JSONWebKey(json: member))
        }
        self.keys = keys
    }

    /// The JSON object `{"keys":[...]}`.
    public var jsonObject: JSONObject {
        JSONObject(["keys": .array(keys.map { .object($0.jsonObject) })])
    }

    /// Every key as an RS256 verification key. Refuses the whole set if any key is unusable, or if two keys
    /// share a `kid` (which would make key selection ambiguous).
    public func verificationKeys() throws(KeyError) -> [RSAVerificationKey] {
        var seen = Set<String>()
        var result: [RSAVerificationKey] = []
        for key in keys {
            if let kid = key.keyID, !seen.insert(kid).inserted {
                throw .invalidJWKSet("has two keys with kid \"\(kid.prefix(64))\"")
            }
            result.append(try RSAVerificationKey(jwk: key))
        }
        return result
    }

    /// The keys that verify signatures (RS256 or ES256), skipping the rest — an OpenID Provider's set may also
    /// publish encryption keys, or keys for algorithms FleetAuth does not accept. Returns the skipped keys' reasons
    /// for the log. Refuses the set if two usable keys share a `kid`.
    public func signatureVerificationKeys() throws(KeyError) -> (keys: [SignatureVerificationKey], skipped: [String]) {
        var seen = Set<String>()
        var result: [SignatureVerificationKey] = []
        var skipped: [String] = []
        for jwk in keys {
            let key: SignatureVerificationKey
            do {
                key = try SignatureVerificationKey(jwk: jwk)
            } catch {
                skipped.append(error.message)
                continue
            }
            if let kid = key.keyID, !seen.insert(kid).inserted {
                throw .invalidJWKSet("has two keys with kid \"\(kid.prefix(64))\"")
            }
            result.append(key)
        }
        return (result, skipped)
    }
}
