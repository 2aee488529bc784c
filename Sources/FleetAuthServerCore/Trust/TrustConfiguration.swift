public import FleetAuthCore
package import FleetAuthJWT
import Foundation

/// Which service accounts a Fleet Engine trusts, and where their public keys are: the trust file that
/// `fleetauth emulator --trust FILE` reads and that the token server writes for it (`emulator-trust.json`, trusting
/// its keys by JWK set URL). This type owns the format, both ways:
///
/// ```json
/// {"serviceAccounts": [
///   {"email": "driver@demo-project.iam.gserviceaccount.com", "project": "demo-project",
///    "roles": ["roles/fleetengine.driverSdkUser"], "keyFile": "driver.json"},
///   {"email": "...", "project": "...", "roles": [...], "jwks": "keys.json"},
///   {"email": "...", "project": "...", "roles": [...], "jwksURL": "http://127.0.0.1:8788/service_accounts/v1/metadata/jwk/..."}
/// ]}
/// ```
///
/// Each account has exactly one key source. Relative paths are relative to the trust file. Unknown members,
/// unknown roles and duplicate emails are errors, so a typo never silently trusts less (or more) than meant.
/// ``jsonText`` writes the same document back, so what one server writes the other reads.
public struct TrustConfiguration: Sendable, Hashable {
    /// Where an account's public keys come from.
    public struct KeySource: Sendable, Hashable, CustomStringConvertible {
        enum Kind: String, Sendable {
            case keyFile, jwks, jwksURL
        }
        let kind: Kind
        /// The file path or URL.
        public let location: String

        /// A service-account key file; its public key is trusted.
        public static func keyFile(_ path: String) -> Self { Self(kind: .keyFile, location: path) }
        /// A JWK set file.
        public static func jwks(_ path: String) -> Self { Self(kind: .jwks, location: path) }
        /// A JWK set served over HTTP, fetched at start and again when a token names an unknown `kid`.
        public static func jwksURL(_ url: String) -> Self { Self(kind: .jwksURL, location: url) }

        /// Whether the keys come from a URL.
        public var isURL: Bool { kind == .jwksURL }
        /// Whether the source is a service-account key file (whose private key the emulator then holds).
        public var isKeyFile: Bool { kind == .keyFile }
        public var description: String { "\(kind.rawValue) \(location)" }
    }

    /// One trusted account.
    public struct ServiceAccount: Sendable, Hashable {
        public var account: TrustedServiceAccount
        public var keySource: KeySource

        public init(account: TrustedServiceAccount, keySource: KeySource) {
            self.account = account
            self.keySource = keySource
        }
    }

    /// The trusted accounts.
    public var serviceAccounts: [ServiceAccount]

    public init(serviceAccounts: [ServiceAccount]) {
        self.serviceAccounts = serviceAccounts
    }

    /// Reads a trust file.
    public init(contentsOf path: String) throws(TrustConfigurationError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TrustConfigurationError(.unreadable, "\(path): no such trust file, or it cannot be read")
        }
        let directory = (path as NSString).deletingLastPathComponent
        try self.init(json: Array(data), source: path, baseDirectory: directory.isEmpty ? "." : directory)
    }

    /// Reads a trust document; `source` names it in errors and relative paths resolve against `baseDirectory`.
    public init(json bytes: [UInt8], source: String, baseDirectory: String) throws(TrustConfigurationError) {
        let root: JSONObject
        do {
            root = try StrictJSONParser().parseObject(bytes)
        } catch {
            throw TrustConfigurationError("\(source): not a strict JSON object: \(error.message)")
        }
        for key in root.keys where key != "serviceAccounts" {
            throw TrustConfigurationError("\(source): unknown member \"\(key)\" (expected \"serviceAccounts\")")
        }
        guard case .array(let entries)? = root["serviceAccounts"] else {
            throw TrustConfigurationError("\(source): \"serviceAccounts\" must be an array")
        }
        var accounts: [ServiceAccount] = []
        var emails = Set<String>()
        for (index, entry) in entries.enumerated() {
            let place = "\(source): serviceAccounts[\(index)]"
            guard case .object(let object) = entry else { throw TrustConfigurationError("\(place) must be an object") }
            let allowed: Set<String> = ["email", "project", "roles", "keyFile", "jwks", "jwksURL"]
            for key in object.keys where !allowed.contains(key) {
                throw TrustConfigurationError("\(place) has unknown member \"\(key)\"")
            }
            func string(_ key: String) throws(TrustConfigurationError) -> String? {
                guard let value = object[key] else { return nil }
                guard case .string(let text) = value, !text.isEmpty else {
                    throw TrustConfigurationError("\(place).\(key) must be a non-empty string")
                }
                return text
            }
            guard let email = try string("email") else { throw TrustConfigurationError("\(place) needs \"email\"") }
            guard let project = try string("project") else {
                throw TrustConfigurationError("\(place) needs \"project\"")
            }
            guard case .array(let roleValues)? = object["roles"], !roleValues.isEmpty else {
                throw TrustConfigurationError("\(place).roles must be a non-empty array of role IDs")
            }
            var roles: [FleetEngineRole] = []
            for value in roleValues {
                guard let id = value.stringValue, let role = FleetEngineRole(id: id) else {
                    let known = FleetEngineRole.all.map(\.id).joined(separator: ", ")
                    throw TrustConfigurationError("\(place).roles has \(value.jsonText), which is not one of \(known)")
                }
                roles.append(role)
            }
            let sources = [
                try string("keyFile").map { KeySource.keyFile(Self.resolve($0, in: baseDirectory)) },
                try string("jwks").map { KeySource.jwks(Self.resolve($0, in: baseDirectory)) },
                try string("jwksURL").map { KeySource.jwksURL($0) },
            ].compactMap { $0 }
            guard sources.count == 1 else {
                throw TrustConfigurationError("\(place) needs exactly one of \"keyFile\", \"jwks\" and \"jwksURL\"")
            }
            guard emails.insert(email).inserted else {
                throw TrustConfigurationError("\(place): \(email) is listed twice")
            }
            accounts.append(
                ServiceAccount(
                    account: TrustedServiceAccount(email: email, project: project, roles: roles),
                    keySource: sources[0]
                )
            )
        }
        self.serviceAccounts = accounts
    }

    /// The trust document, pretty-printed, ending with a newline. Key sources are written as given.
    public var jsonText: String {
        let entries = serviceAccounts.map { entry -> JSONValue in
            var object: JSONObject = [
                "email": .string(entry.account.email), "project": .string(entry.account.project),
                "roles": .array(entry.account.roles.map { .string($0.id) }),
            ]
            object[entry.keySource.kind.rawValue] = .string(entry.keySource.location)
            return .object(object)
        }
        return JSONValue.object(["serviceAccounts": .array(entries)]).prettyText() + "\n"
    }

    /// Writes ``jsonText`` to `path`, replacing the file at once (readers see the old or the new file, whole).
    public func write(to path: String) throws {
        try Data(jsonText.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    static func resolve(_ path: String, in directory: String) -> String {
        path.hasPrefix("/") ? path : directory + "/" + path
    }

    /// The keys of one account from a file source (a key file or a JWK set file). A key file's email and project
    /// must match the configuration.
    package static func loadFileKeys(for entry: ServiceAccount) throws(TrustConfigurationError) -> [RSAVerificationKey]
    {
        switch entry.keySource.kind {
        case .keyFile:
            let key: ServiceAccountKey
            do {
                key = try ServiceAccountKey(contentsOf: entry.keySource.location)
            } catch {
                throw TrustConfigurationError(error.message)
            }
            guard key.clientEmail == entry.account.email else {
                throw TrustConfigurationError(
                    "\(entry.keySource.location): the key is for \(key.clientEmail), not \(entry.account.email)"
                )
            }
            return [key.verificationKey]
        case .jwks:
            guard let data = FileManager.default.contents(atPath: entry.keySource.location) else {
                throw TrustConfigurationError(
                    .unreadable,
                    "\(entry.keySource.location): no such JWK set file, or it cannot be read"
                )
            }
            do {
                return try JSONWebKeySet(json: Array(data)).verificationKeys()
            } catch {
                throw TrustConfigurationError("\(entry.keySource.location): \(error.message)")
            }
        case .jwksURL:
            return []
        }
    }
}

/// A trust file that cannot be used; the message names the file, the entry and the problem.
public struct TrustConfigurationError: CodedError {
    /// A stable code, safe for logs and metric labels.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The trust file, or a key set it names, breaks a rule of its format.
        public static let invalid = Code("invalid")
        /// A file or URL it names cannot be read.
        public static let unreadable = Code("unreadable")
    }

    /// What went wrong.
    public let code: Code
    /// What went wrong, naming the file and the entry.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A file that breaks a rule of its format (``Code/invalid``).
    public init(_ message: String) { self.init(.invalid, message) }
}
