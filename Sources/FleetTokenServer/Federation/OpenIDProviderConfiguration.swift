import FleetAuthDatabase
import FleetAuthServerCore
import Foundation

/// An OpenID Provider whose ID tokens log app users in: its issuer identifier and the client ID (audience) its ID
/// tokens must be for — for Firebase Authentication, `https://securetoken.google.com/PROJECT` and `PROJECT`; for
/// Google Sign-In, `https://accounts.google.com` and the server's OAuth client ID; for Keycloak,
/// `https://HOST/realms/REALM` and the client's ID.
public struct OpenIDProviderConfiguration: Sendable, Hashable {
    /// The issuer identifier, exactly as its ID tokens' `iss` reads (no trailing slash unless the provider's has one).
    public var issuer: String
    /// The client ID its ID tokens must name in `aud`.
    public var audience: String

    public init(issuer: String, audience: String) {
        self.issuer = issuer
        self.audience = audience
    }

    /// Where the provider's discovery document is: the issuer + `/.well-known/openid-configuration`.
    public var discoveryURL: String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// Refuses an issuer that is not an `https://` URL without query or fragment (plain `http://` only on a loopback
    /// host, for development and tests), and an empty audience.
    public func validate() throws(GoogleAPIError) {
        guard Self.isAllowedURL(issuer), let components = URLComponents(string: issuer), components.query == nil,
            components.fragment == nil
        else {
            throw .invalidArgument(
                "The OpenID issuer \(issuer.prefix(200)) must be an https:// URL without query or fragment "
                    + "(http:// only on 127.0.0.1, ::1 or localhost)."
            )
        }
        guard !audience.isEmpty, audience.utf8.count <= 512, StoredText.isStorable(audience) else {
            throw .invalidArgument(
                "The OpenID audience of \(issuer.prefix(200)) must be a client ID of 1–512 characters."
            )
        }
    }

    /// Whether `text` is an `https://` URL with a host, or an `http://` URL on a loopback host.
    static func isAllowedURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let host = url.host, !host.isEmpty else { return false }
        switch url.scheme {
        case "https": return true
        case "http": return ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host) || host.hasPrefix("127.")
        default: return false
        }
    }
}
