public import Foundation

/// The records of the signing keys of every token family: which key belongs to which family, where its private
/// half is, and when it was retired.
public protocol SigningKeyStore: Sendable {
    /// Every key record, oldest first.
    func signingKeys() async throws -> [SigningKeyRecord]
    /// Adds a key as its family's signing key, retiring the current one at the new key's creation time, in one
    /// transaction.
    func addSigningKey(_ record: SigningKeyRecord) async throws
    /// Adds a family's first key, unless the family already has one (another instance got there first); in one
    /// transaction, so instances that start together agree on one key. Returns whether it was added.
    func addFirstSigningKey(_ record: SigningKeyRecord) async throws -> Bool
    /// Forgets the keys retired at or before `cutoff`, in one transaction; returns them so their files can be
    /// removed. When several instances prune at once, each key is returned to exactly one of them.
    func removeSigningKeys(retiredAtOrBefore cutoff: Date) async throws -> [SigningKeyRecord]
}

/// Where a signing key's private half is.
public enum SigningKeyMaterial: Sendable, Hashable {
    /// A service-account key file on this machine (keys of the single-machine SQLite setup, or the operator's own
    /// key files).
    case file(path: String)
    /// The key file's JSON sealed under the key-encryption key (``KeyEncryptionKey``), kept in the database so
    /// every instance can sign with it.
    case sealed([UInt8])
    /// No private key here: the family signs through a signer FleetAuth does not hold the key of — `kind` is
    /// `iam` (Google's IAM `signJwt`) or `pkcs11` (an HSM or Cloud KMS) — as the service account `email`.
    case external(kind: String, email: String)

    /// How an external key is written in a store's key-path column: `external:KIND:EMAIL`.
    public var storedPath: String? {
        switch self {
        case .file(let path): path
        case .sealed: nil
        case .external(let kind, let email): "external:\(kind):\(email)"
        }
    }

    /// The material a store's key-path column (and sealed column) describe.
    public init(storedPath path: String?, sealed: [UInt8]?) {
        if let path, path.hasPrefix("external:") {
            let parts = path.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            self = .external(
                kind: parts.count > 1 ? String(parts[1]) : "",
                email: parts.count > 2 ? String(parts[2]) : ""
            )
        } else if let path {
            self = .file(path: path)
        } else {
            self = .sealed(sealed ?? [])
        }
    }

    /// Whether the private key is held elsewhere (IAM, PKCS#11).
    public var isExternal: Bool {
        if case .external = self { return true }
        return false
    }

    /// The file's path, for file keys.
    public var path: String? {
        if case .file(let path) = self { return path }
        return nil
    }
}

/// One signing key's record.
public struct SigningKeyRecord: Sendable, Hashable {
    /// The key ID (`private_key_id`).
    public var kid: String
    /// The family whose tokens it signs.
    public var family: TokenFamily
    /// Where the private key is.
    public var material: SigningKeyMaterial
    public var createdAt: Date
    /// When a newer key replaced it; `nil` for the family's signing key.
    public var retiredAt: Date?

    public init(
        kid: String,
        family: TokenFamily,
        material: SigningKeyMaterial,
        createdAt: Date,
        retiredAt: Date? = nil
    ) {
        self.kid = kid
        self.family = family
        self.material = material
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}
