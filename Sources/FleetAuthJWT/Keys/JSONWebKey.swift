public import FleetAuthCore

/// A public key in JWK form (RFC 7517): RSA, as Google publishes service-account keys at
/// `https://www.googleapis.com/service_accounts/v1/metadata/jwk/{email}`, or an elliptic-curve key (`kty` `EC`), as
/// some OpenID Providers publish for ES256 ID tokens.
public struct JSONWebKey: Sendable, Hashable {
    /// `kid`.
    public var keyID: String?
    /// `kty`; `RSA` for every key FleetAuth uses.
    public var keyType: String
    /// `alg`; `RS256` when present.
    public var algorithm: String?
    /// `use`; `sig` when present.
    public var use: String?
    /// `key_ops`, when present.
    public var keyOperations: [String]?
    /// `n`, base64url.
    public var modulus: String
    /// `e`, base64url.
    public var exponent: String
    /// `crv` of an `EC` key (`P-256` for ES256).
    public var curve: String?
    /// `x` and `y` of an `EC` key, base64url.
    public var x: String?
    public var y: String?
    /// Names of private-key members the JWK carried (`d`, `p`, ...); a published key must have none.
    public var privateMembers: [String]

    /// A public RS256 signing key.
    public init(keyID: String?, modulus: String, exponent: String) {
        self.keyID = keyID
        self.keyType = "RSA"
        self.algorithm = "RS256"
        self.use = "sig"
        self.keyOperations = nil
        self.modulus = modulus
        self.exponent = exponent
        self.privateMembers = []
    }

    /// A public ES256 signing key: `kty` `EC`, `crv` `P-256`, the point's coordinates in base64url.
    public init(keyID: String?, curve: String = "P-256", x: String, y: String) {
        self.keyID = keyID
        self.keyType = "EC"
        self.algorithm = "ES256"
        self.use = "sig"
        self.keyOperations = nil
        self.modulus = ""
        self.exponent = ""
        self.curve = curve
        self.x = x
        self.y = y
        self.privateMembers = []
    }

    /// The JWK as a JSON object, `{"kid","kty","alg","use","n","e"}`.
    public var jsonObject: JSONObject {
        var object = JSONObject()
        if let keyID { object["kid"] = .string(keyID) }
        object["kty"] = .string(keyType)
        if let algorithm { object["alg"] = .string(algorithm) }
        if let use { object["use"] = .string(use) }
        if let keyOperations { object["key_ops"] = .array(keyOperations.map(JSONValue.string)) }
        if keyType == "EC" {
            if let curve { object["crv"] = .string(curve) }
            if let x { object["x"] = .string(x) }
            if let y { object["y"] = .string(y) }
        } else {
            object["n"] = .string(modulus)
            object["e"] = .string(exponent)
        }
        return object
    }

    /// Reads a JWK object. Any `kty` is read; ``checkUsableForRS256Verification()`` decides if it can be used.
    public init(json object: JSONObject) throws(KeyError) {
        func string(_ name: String, required: Bool) throws(KeyError) -> String? {
            guard let value = object[name] else {
                if required { throw .invalidJWK(object["kid"]?.stringValue, "has no \"\(name)\"") }
                return nil
            }
            guard case .string(let text) = value else {
                throw .invalidJWK(object["kid"]?.stringValue, "\"\(name)\" must be a string")
            }
            return text
        }
        self.keyID = try string("kid", required: false)
        self.keyType = try string("kty", required: true)!
        self.algorithm = try string("alg", required: false)
        self.use = try string("use", required: false)
        if let ops = object["key_ops"] {
            guard case .array(let values) = ops else { throw .invalidJWK(keyID, "\"key_ops\" must be an array") }
            self.keyOperations = values.compactMap(\.stringValue)
        } else {
            self.keyOperations = nil
        }
        self.modulus = try string("n", required: keyType == "RSA") ?? ""
        self.exponent = try string("e", required: keyType == "RSA") ?? ""
        self.curve = try string("crv", required: keyType == "EC")
        self.x = try string("x", required: keyType == "EC")
        self.y = try string("y", required: keyType == "EC")
        self.privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"].filter { object[$0] != nil }
    }

    /// Refuses a JWK that must not verify RS256 signatures: not `kty` RSA; `alg` other than RS256; `use`
    /// other than `sig`; `key_ops` without `verify`; private-key members present.
    public func checkUsableForRS256Verification() throws(KeyError) {
        guard keyType == "RSA" else { throw .invalidJWK(keyID, "has kty \"\(keyType)\"; only RSA keys verify RS256") }
        try checkUsable(for: "RS256")
    }

    /// Refuses a JWK that must not verify ES256 signatures: not `kty` EC on `crv` P-256; `alg` other than ES256;
    /// `use` other than `sig`; `key_ops` without `verify`; private-key members present.
    public func checkUsableForES256Verification() throws(KeyError) {
        guard keyType == "EC" else { throw .invalidJWK(keyID, "has kty \"\(keyType)\"; only EC keys verify ES256") }
        guard curve == "P-256" else {
            throw .invalidJWK(keyID, "is on curve \"\(curve ?? "")\"; ES256 needs P-256")
        }
        try checkUsable(for: "ES256")
    }

    private func checkUsable(for expected: String) throws(KeyError) {
        if let algorithm, algorithm != expected {
            throw .invalidJWK(keyID, "is for \"\(algorithm)\"; only \(expected) is accepted")
        }
        if let use, use != "sig" { throw .invalidJWK(keyID, "has use \"\(use)\"; a signing key has use \"sig\"") }
        if let keyOperations, !keyOperations.contains("verify") {
            throw .invalidJWK(keyID, "has key_ops without \"verify\"")
        }
        if !privateMembers.isEmpty {
            throw .invalidJWK(keyID, "carries private key material; publish and trust public keys only")
        }
    }
}
