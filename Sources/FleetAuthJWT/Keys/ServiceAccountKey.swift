import CryptoExtras
public import FleetAuthCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A Google service-account key: the JSON key file the Cloud console downloads, with its RSA private key.
///
/// ```json
/// {"type": "service_account", "project_id": "...", "private_key_id": "<40 hex>",
///  "private_key": "-----BEGIN PRIVATE KEY-----\n...", "client_email": "name@project.iam.gserviceaccount.com",
///  "client_id": "...", "token_uri": "https://oauth2.googleapis.com/token", ...}
/// ```
///
/// Errors name the file and the problem, and never contain key material.
public struct ServiceAccountKey: Sendable {
    /// `project_id`: the Fleet Engine provider ID.
    public let projectID: String
    /// `private_key_id`: the `kid` of tokens signed with this key.
    public let privateKeyID: String
    /// `client_email`: the `iss` and `sub` of tokens signed with this key.
    public let clientEmail: String
    /// `client_id`, when present.
    public let clientID: String?
    /// `token_uri`, when present.
    public let tokenURI: String?
    /// Where the key was read from, for messages; `nil` for a key made in memory.
    public let source: String?
    let privateKey: _RSA.Signing.PrivateKey

    /// The environment variable Application Default Credentials reads.
    public static let credentialsEnvironmentVariable = "GOOGLE_APPLICATION_CREDENTIALS"

    /// Reads a key file.
    public init(contentsOf path: String) throws(ServiceAccountKeyError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .fileNotFound(path) }
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        try self.init(json: Array(data), source: path)
    }

    /// Reads a key file's contents; `source` names it in errors.
    public init(json bytes: [UInt8], source: String = "service-account key") throws(ServiceAccountKeyError) {
        let object: JSONObject
        do {
            object = try StrictJSONParser().parseObject(bytes)
        } catch {
            throw .notJSON(source)
        }
        guard let type = object["type"]?.stringValue else { throw .notServiceAccount(source, type: nil) }
        guard type == "service_account" else { throw .notServiceAccount(source, type: type) }
        func field(_ name: String) throws(ServiceAccountKeyError) -> String {
            guard let value = object[name]?.stringValue, !value.isEmpty else { throw .missingField(source, name) }
            return value
        }
        self.projectID = try field("project_id")
        self.privateKeyID = try field("private_key_id")
        self.clientEmail = try field("client_email")
        self.clientID = object["client_id"]?.stringValue
        self.tokenURI = object["token_uri"]?.stringValue
        self.source = source
        let pem = try field("private_key")
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(unsafePEMRepresentation: pem)
        } catch {
            throw .invalidPrivateKey(source)
        }
        guard key.keySizeInBits >= 2048 else { throw .keyTooSmall(source, bits: key.keySizeInBits) }
        self.privateKey = key
    }

    init(
        projectID: String,
        privateKeyID: String,
        clientEmail: String,
        clientID: String,
        privateKey: _RSA.Signing.PrivateKey
    ) {
        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.clientEmail = clientEmail
        self.clientID = clientID
        self.tokenURI = Self.googleTokenURI
        self.source = nil
        self.privateKey = privateKey
    }

    /// Finds the key as Application Default Credentials do: the file named by `GOOGLE_APPLICATION_CREDENTIALS`,
    /// (from `environment`, by default the process's), else gcloud's well-known file (`~/.config/gcloud/application_default_credentials.json`), which must then
    /// be a service-account key.
    public static func applicationDefault(
        environment: [String: String]? = nil
    ) throws(ServiceAccountKeyError) -> ServiceAccountKey {
        let environment = environment ?? ProcessInfo.processInfo.environment
        if let path = environment[credentialsEnvironmentVariable], !path.isEmpty {
            return try ServiceAccountKey(contentsOf: path)
        }
        let configDirectory =
            environment["CLOUDSDK_CONFIG"] ?? environment["HOME"].map { "\($0)/.config/gcloud" } ?? ""
        let wellKnown = "\(configDirectory)/application_default_credentials.json"
        if !configDirectory.isEmpty, FileManager.default.fileExists(atPath: wellKnown) {
            return try ServiceAccountKey(contentsOf: wellKnown)
        }
        throw .noCredentials
    }

    /// ``generate(projectID:name:)`` on a thread of its own, for servers and other async code: generating an
    /// RSA-2048 key takes from a tenth of a second to seconds of CPU, too long to hold one of Swift concurrency's
    /// few threads (a burst of them stalls every request of the process).
    public static func generateDetached(projectID: String, name: String) async throws(ServiceAccountKeyError)
        -> ServiceAccountKey
    {
        try await onThreadOfItsOwn { () throws(ServiceAccountKeyError) in try generate(projectID: projectID, name: name)
        }
    }

    /// Makes a new key for service account `name` in project `projectID`: RSA-2048, a random 40-hex-digit
    /// `private_key_id`, and the email `name@projectID.iam.gserviceaccount.com`.
    public static func generate(projectID: String, name: String) throws(ServiceAccountKeyError) -> ServiceAccountKey {
        try checkIdentifier(projectID, what: "project ID")
        try checkIdentifier(name, what: "service-account name")
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        } catch {
            throw .generationFailed
        }
        return ServiceAccountKey(projectID: projectID, name: name, privateKey: key)
    }

    /// The key file of service account `name` in project `projectID` for an RSA key made elsewhere (PEM, at least
    /// 2048 bits), with a new `private_key_id` and client ID as ``generate(projectID:name:)`` gives them: how
    /// FleetAuth's test support hands out keys it keeps between runs.
    package init(projectID: String, name: String, privateKeyPEM pem: String) throws(ServiceAccountKeyError) {
        try Self.checkIdentifier(projectID, what: "project ID")
        try Self.checkIdentifier(name, what: "service-account name")
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(unsafePEMRepresentation: pem)
        } catch {
            throw .invalidPrivateKey("a kept key")
        }
        guard key.keySizeInBits >= 2048 else { throw .keyTooSmall("a kept key", bits: key.keySizeInBits) }
        self.init(projectID: projectID, name: name, privateKey: key)
    }

    /// A new identity for `privateKey`: a random 40-hex-digit `private_key_id` and a 21-digit client ID.
    private init(projectID: String, name: String, privateKey: _RSA.Signing.PrivateKey) {
        var generator = SystemRandomNumberGenerator()
        let keyID = (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let clientID = "1" + (0..<20).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
        self.init(
            projectID: projectID,
            privateKeyID: keyID,
            clientEmail: "\(name)@\(projectID).iam.gserviceaccount.com",
            clientID: clientID,
            privateKey: privateKey
        )
    }

    /// A new key for the same service account (same email, project and client ID), with a fresh RSA-2048 key
    /// and `private_key_id`: what adding a key to a service account does, the first step of a rotation.
    public func newKey() throws(ServiceAccountKeyError) -> ServiceAccountKey {
        let fresh = try Self.generate(projectID: projectID, name: "rotated")
        return ServiceAccountKey(
            projectID: projectID,
            privateKeyID: fresh.privateKeyID,
            clientEmail: clientEmail,
            clientID: clientID ?? fresh.clientID ?? "",
            privateKey: fresh.privateKey
        )
    }

    /// ``newKey()`` on a thread of its own (see ``generateDetached(projectID:name:)``).
    public func newKeyDetached() async throws(ServiceAccountKeyError) -> ServiceAccountKey {
        try await onThreadOfItsOwn { () throws(ServiceAccountKeyError) in try newKey() }
    }

    private static func checkIdentifier(_ value: String, what: String) throws(ServiceAccountKeyError) {
        let allowed = value.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
        guard !value.isEmpty, value.utf8.count <= 63, allowed, let first = value.utf8.first, first >= 0x61,
            first <= 0x7A, value.utf8.last != 0x2D
        else {
            throw .invalidIdentifier(
                "\(what) \"\(value.prefix(64))\" must be 1–63 lowercase letters, digits or hyphens, start with a letter and not end with a hyphen"
            )
        }
    }

    static let googleTokenURI = "https://oauth2.googleapis.com/token"

    /// The public half, with `kid` = ``privateKeyID``.
    public var verificationKey: RSAVerificationKey {
        // The private key was checked to be at least 2048 bits, so its public half is accepted.
        try! RSAVerificationKey(key: privateKey.publicKey, keyID: privateKeyID)
    }

    /// The key file's JSON, in Google's format and field order.
    public var jsonObject: JSONObject {
        let escapedEmail = clientEmail.replacingOccurrences(of: "@", with: "%40")
        var object = JSONObject()
        object["type"] = "service_account"
        object["project_id"] = .string(projectID)
        object["private_key_id"] = .string(privateKeyID)
        let pem = privateKey.pkcs8PEMRepresentation
        object["private_key"] = .string(pem.hasSuffix("\n") ? pem : pem + "\n")
        object["client_email"] = .string(clientEmail)
        if let clientID { object["client_id"] = .string(clientID) }
        object["auth_uri"] = "https://accounts.google.com/o/oauth2/auth"
        object["token_uri"] = .string(tokenURI ?? Self.googleTokenURI)
        object["auth_provider_x509_cert_url"] = "https://www.googleapis.com/oauth2/v1/certs"
        object["client_x509_cert_url"] = .string("https://www.googleapis.com/robot/v1/metadata/x509/\(escapedEmail)")
        object["universe_domain"] = "googleapis.com"
        return object
    }

    /// Writes the key file to `path` with mode 0600. The file must not exist yet: a key is never overwritten.
    public func write(to path: String) throws(ServiceAccountKeyError) {
        let bytes = Array((JSONValue.object(jsonObject).prettyText() + "\n").utf8)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw errno == EEXIST ? .fileExists(path) : .writeFailed(path, String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(path, String(cString: strerror(errno)))
            }
            written += result
        }
        guard fsync(descriptor) == 0 else { throw .writeFailed(path, String(cString: strerror(errno))) }
    }
}
