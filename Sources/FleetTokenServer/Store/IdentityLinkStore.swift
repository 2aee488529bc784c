public import Foundation

/// A user's identity at an OpenID Provider: the issuer's identifier and the user's `sub` there. An empty
/// ``issuer`` means "the token server's only configured issuer" (a link made without `--issuer`).
public struct ExternalIdentity: Sendable, Hashable, CustomStringConvertible {
    public var issuer: String
    public var subject: String

    public init(issuer: String, subject: String) {
        self.issuer = issuer
        self.subject = subject
    }

    public var description: String { issuer.isEmpty ? subject : "\(subject) at \(issuer)" }
}

/// Which app user each external identity is (federated login, see ``OpenIDFederation``).
///
/// An identity is linked to at most one user; a user may have several. Removing a user removes its links.
public protocol IdentityLinkStore: Sendable {
    /// Adds a user and links `identity` to it in one transaction: `already_exists` if the username is taken or the
    /// identity already linked, and then nothing is written.
    func addUser(_ user: AppUser, passwordHash: String, createdAt: Date, identity: ExternalIdentity) async throws
    /// Links `identity` to an existing user: `not_found` for no such user, `already_exists` if it is linked.
    func linkIdentity(_ identity: ExternalIdentity, to username: String) async throws
    /// The user `iss` + `sub` is linked to. A link with an empty issuer matches too when `matchingUnqualified` (the
    /// server has one issuer); a link naming the issuer wins over one without.
    func linkedUser(issuer: String, subject: String, matchingUnqualified: Bool) async throws -> AppUser?
    /// Every link, by username.
    func identities() async throws -> [String: [ExternalIdentity]]
}
