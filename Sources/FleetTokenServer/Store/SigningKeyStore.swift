public import Foundation

/// The records of the signing keys of every token family: which key belongs to which family, where it is, and
/// when it was retired.
public protocol SigningKeyStore: Sendable {
    /// Every key record, oldest first.
    func signingKeys() async throws -> [SigningKeyRecord]
    /// Adds a key as its family's signing key, retiring the current one at the new key's creation time, in one
    /// transaction.
    func addSigningKey(_ record: SigningKeyRecord) async throws
    /// Forgets the keys retired at or before `cutoff`, in one transaction; returns them so their files can be
    /// removed.
    func removeSigningKeys(retiredAtOrBefore cutoff: Date) async throws -> [SigningKeyRecord]
}

/// One signing key's record.
public struct SigningKeyRecord: Sendable, Hashable {
    /// The key ID (`private_key_id`).
    public var kid: String
    /// The family whose tokens it signs.
    public var family: TokenFamily
    /// The key file.
    public var keyPath: String
    public var createdAt: Date
    /// When a newer key replaced it; `nil` for the family's signing key.
    public var retiredAt: Date?

    public init(kid: String, family: TokenFamily, keyPath: String, createdAt: Date, retiredAt: Date? = nil) {
        self.kid = kid
        self.family = family
        self.keyPath = keyPath
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}
