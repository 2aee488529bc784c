import FleetAuthCore
public import FleetAuthJWT
import Foundation

/// Where an OAuth 2.0 access token for Google's APIs comes from: the kinds of Application Default Credentials.
public enum GoogleCredentials: Sendable {
    /// A service-account key file: a JWT-bearer grant (RFC 7523) signed with its key, at its `token_uri`.
    case serviceAccount(ServiceAccountKey)
    /// A user's refresh token (`gcloud auth application-default login`): a refresh-token grant at `tokenURI`.
    case authorizedUser(clientID: String, clientSecret: String, refreshToken: String, tokenURI: String)
    /// A service account impersonated with other credentials (`gcloud auth application-default login
    /// --impersonate-service-account`): the source's token calls IAM `generateAccessToken` at `url`.
    indirect case impersonated(source: GoogleCredentials, url: String, delegates: [String])
    /// The metadata server of Cloud Run, GKE, Compute Engine and App Engine, at `host` (`metadata.google.internal`,
    /// or `GCE_METADATA_HOST`).
    case metadataServer(host: String)

    /// The OAuth scope FleetAuth asks for: IAM `signJwt` accepts `cloud-platform` (or `iam`).
    public static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
    /// Google's OAuth token endpoint, for authorized-user files that do not name one.
    public static let googleTokenURI = "https://oauth2.googleapis.com/token"
    /// The metadata server's host when `GCE_METADATA_HOST` is not set.
    public static let defaultMetadataHost = "metadata.google.internal"

    /// Application Default Credentials, in the order Google's client libraries look
    /// (<https://cloud.google.com/docs/authentication/application-default-credentials>):
    ///
    /// 1. the file named by `GOOGLE_APPLICATION_CREDENTIALS` (a `service_account`, `authorized_user` or
    ///    `impersonated_service_account` file);
    /// 2. gcloud's well-known file, `$CLOUDSDK_CONFIG/application_default_credentials.json` or
    ///    `~/.config/gcloud/application_default_credentials.json`;
    /// 3. the metadata server at `$GCE_METADATA_HOST`, or `metadata.google.internal`.
    ///
    /// A named file that is missing or unusable is an error (as in Google's libraries), not a reason to go on.
    ///
    /// - Parameter environment: the variables to read; the process's by default. Tests pass their own, so nothing
    ///   here ever reaches the real metadata server by accident.
    public static func applicationDefault(environment: [String: String]? = nil) throws(SigningError) -> Self {
        let environment = environment ?? ProcessInfo.processInfo.environment
        if let path = environment[ServiceAccountKey.credentialsEnvironmentVariable], !path.isEmpty {
            return try file(path, source: "GOOGLE_APPLICATION_CREDENTIALS (\(path))")
        }
        let configDirectory =
            environment["CLOUDSDK_CONFIG"] ?? environment["HOME"].map { "\($0)/.config/gcloud" } ?? ""
        let wellKnown = "\(configDirectory)/application_default_credentials.json"
        if !configDirectory.isEmpty, FileManager.default.fileExists(atPath: wellKnown) {
            return try file(wellKnown, source: "gcloud's credentials (\(wellKnown))")
        }
        let host = environment["GCE_METADATA_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultMetadataHost
        return .metadataServer(host: host)
    }

    /// Credentials from a credentials file of any kind ADC reads.
    public static func file(_ path: String, source: String? = nil) throws(SigningError) -> Self {
        let source = source ?? path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unauthenticated("The credentials file of \(source) does not exist or cannot be read.")
        }
        return try json(Array(data), source: source)
    }

    /// Credentials from a credentials file's contents; `source` names it in errors.
    public static func json(_ bytes: [UInt8], source: String) throws(SigningError) -> Self {
        let object: JSONObject
        do {
            object = try StrictJSONParser().parseObject(bytes)
        } catch {
            throw .unauthenticated("The credentials file of \(source) is not a JSON object.")
        }
        return try credentials(object, source: source, nested: false)
    }

    private static func credentials(_ object: JSONObject, source: String, nested: Bool) throws(SigningError) -> Self {
        func field(_ name: String) throws(SigningError) -> String {
            guard let value = object[name]?.stringValue, !value.isEmpty else {
                throw .unauthenticated("The credentials of \(source) have no \"\(name)\".")
            }
            return value
        }
        switch object["type"]?.stringValue {
        case "service_account":
            do {
                return .serviceAccount(try ServiceAccountKey(json: object.jsonBytes, source: source))
            } catch {
                throw .unauthenticated(error.message)
            }
        case "authorized_user":
            return .authorizedUser(
                clientID: try field("client_id"),
                clientSecret: try field("client_secret"),
                refreshToken: try field("refresh_token"),
                tokenURI: object["token_uri"]?.stringValue ?? googleTokenURI
            )
        case "impersonated_service_account" where !nested:
            guard case .object(let inner)? = object["source_credentials"] else {
                throw .unauthenticated("The credentials of \(source) have no \"source_credentials\" object.")
            }
            let delegates = object["delegates"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return .impersonated(
                source: try credentials(inner, source: source + " (source_credentials)", nested: true),
                url: try field("service_account_impersonation_url"),
                delegates: delegates
            )
        case let type:
            throw .unauthenticated(
                "The credentials of \(source) are of type \(type.map { "\"\($0)\"" } ?? "(none)"), which cannot "
                    + "be used here (service_account, authorized_user or impersonated_service_account)."
            )
        }
    }

    /// What the credentials are, for logs: never a secret.
    public var summary: String {
        switch self {
        case .serviceAccount(let key): "service account key of \(key.clientEmail)"
        case .authorizedUser: "a user's refresh token"
        case .impersonated(let source, let url, _):
            "\(url.split(separator: "/").last ?? "") impersonated by \(source.summary)"
        case .metadataServer(let host): "the metadata server at \(host)"
        }
    }
}
