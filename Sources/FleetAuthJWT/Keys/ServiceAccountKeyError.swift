public import FleetAuthCore

/// A problem with a service-account key file. The message names the file and the problem, never key material.
public struct ServiceAccountKeyError: CodedError {
    /// A stable code, safe for logs and metric labels. Codes are static members, so new ones can be added without
    /// breaking callers.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let fileNotFound = Code("file_not_found")
        public static let unreadable = Code("unreadable")
        public static let notJSON = Code("not_json")
        public static let notServiceAccount = Code("not_service_account")
        public static let missingField = Code("missing_field")
        public static let invalidPrivateKey = Code("invalid_private_key")
        public static let keyTooSmall = Code("key_too_small")
        public static let noCredentials = Code("no_credentials")
        public static let invalidIdentifier = Code("invalid_identifier")
        public static let generationFailed = Code("generation_failed")
        public static let fileExists = Code("file_exists")
        public static let writeFailed = Code("write_failed")
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation that names the file.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static let fileNotFound = Self(.fileNotFound, "key file not found")
    public static let unreadable = Self(.unreadable, "key file cannot be read")
    public static let notJSON = Self(.notJSON, "key file is not JSON")
    public static let notServiceAccount = Self(.notServiceAccount, "not a service-account key file")
    public static let missingField = Self(.missingField, "key file lacks a field")
    public static let invalidPrivateKey = Self(.invalidPrivateKey, "private_key does not parse")
    public static let keyTooSmall = Self(.keyTooSmall, "the private key is smaller than 2048 bits")
    public static let noCredentials = Self(
        .noCredentials,
        "no service-account key found: set GOOGLE_APPLICATION_CREDENTIALS to the path of a key file"
    )
    public static let invalidIdentifier = Self(.invalidIdentifier, "invalid project ID or service-account name")
    public static let generationFailed = Self(.generationFailed, "RSA key generation failed")
    public static let fileExists = Self(.fileExists, "the file exists already")
    public static let writeFailed = Self(.writeFailed, "the key file could not be written")

    static func fileNotFound(_ path: String) -> Self { Self(.fileNotFound, "\(path): no such key file") }
    static func unreadable(_ path: String) -> Self { Self(.unreadable, "\(path): the key file cannot be read") }
    static func notJSON(_ path: String) -> Self {
        Self(.notJSON, "\(path): not a service-account key file (the file is not a strict JSON object)")
    }
    static func notServiceAccount(_ path: String, type: String?) -> Self {
        if let type {
            return Self(
                .notServiceAccount,
                "\(path): not a service-account key file (its type is \"\(type.prefix(40))\", not \"service_account\")"
            )
        }
        return Self(
            .notServiceAccount,
            "\(path): not a service-account key file (it has no \"type\": \"service_account\")"
        )
    }
    static func missingField(_ path: String, _ field: String) -> Self {
        Self(.missingField, "\(path): the service-account key file has no \"\(field)\" string")
    }
    static func invalidPrivateKey(_ path: String) -> Self {
        Self(.invalidPrivateKey, "\(path): private_key is not a PEM-encoded RSA private key (PKCS#8 or PKCS#1)")
    }
    static func keyTooSmall(_ path: String, bits: Int) -> Self {
        Self(.keyTooSmall, "\(path): the RSA key has \(bits) bits; at least 2048 are required")
    }
    static func invalidIdentifier(_ message: String) -> Self { Self(.invalidIdentifier, message) }
    static func fileExists(_ path: String) -> Self {
        Self(.fileExists, "\(path): the file exists already; not overwriting it")
    }
    static func writeFailed(_ path: String, _ reason: String) -> Self {
        Self(.writeFailed, "\(path): cannot write: \(reason)")
    }
}
