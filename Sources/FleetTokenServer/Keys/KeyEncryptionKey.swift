import Crypto
public import FleetAuthCore
import Foundation

/// The key that seals the token server's signing keys when they are kept in the database: 32 random bytes, an
/// AES-256-GCM key. It lives outside the database — a file (`--key-encryption-key-file`, the bytes in base64) or
/// the `FLEETAUTH_KEY_ENCRYPTION_KEY` environment variable — so a copy of the database alone signs nothing.
///
/// A sealed key is `0x01 ‖ nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`; the key ID is authenticated with it,
/// so a sealed key copied into another key's row does not open.
public struct KeyEncryptionKey: Sendable, Hashable {
    /// The environment variable that may hold the key, in base64.
    public static let environmentVariable = "FLEETAUTH_KEY_ENCRYPTION_KEY"
    private static let version: UInt8 = 1

    private let key: SymmetricKey

    /// A new random key.
    public static func generate() -> KeyEncryptionKey {
        KeyEncryptionKey(key: SymmetricKey(size: .bits256))
    }

    private init(key: SymmetricKey) {
        self.key = key
    }

    /// The key from its base64 text (surrounding whitespace ignored); `source` names it in errors.
    public init(base64 text: String, source: String = "the key-encryption key") throws(KeyEncryptionKeyError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed) else {
            throw KeyEncryptionKeyError(.invalidKey, "\(source) is not base64 (expected 32 random bytes in base64).")
        }
        guard bytes.count == 32 else {
            throw KeyEncryptionKeyError(
                .invalidKey,
                "\(source) holds \(bytes.count) bytes; a key-encryption key is 32 bytes."
            )
        }
        key = SymmetricKey(data: bytes)
    }

    /// Reads a key file.
    public init(contentsOf path: String) throws(KeyEncryptionKeyError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw KeyEncryptionKeyError(.invalidKey, "Cannot read the key-encryption key file \(path).")
        }
        try self.init(base64: String(decoding: data, as: UTF8.self), source: "The key-encryption key file \(path)")
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.key == rhs.key }

    public func hash(into hasher: inout Hasher) {
        key.withUnsafeBytes { hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: $0[...])) }
    }

    /// The key in base64, as its file holds it.
    public var base64: String {
        key.withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// Writes the key to a new file with mode 0600; an existing file is never overwritten.
    public func write(to path: String) throws(KeyEncryptionKeyError) {
        let bytes = Array((base64 + "\n").utf8)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == EEXIST ? "it already exists" : String(cString: strerror(errno))
            throw KeyEncryptionKeyError(.invalidKey, "Cannot write \(path): \(reason).")
        }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw KeyEncryptionKeyError(.invalidKey, "Cannot write \(path): \(String(cString: strerror(errno))).")
        }
    }

    /// Seals `plaintext` (a key file's JSON), binding it to `keyID`.
    public func seal(_ plaintext: [UInt8], keyID: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array(keyID.utf8))
        guard let combined = box.combined else {
            throw KeyEncryptionKeyError(.cannotUnseal, "AES-GCM did not produce a sealed box.")
        }
        return [Self.version] + Array(combined)
    }

    /// Opens what ``seal(_:keyID:)`` sealed for `keyID`; throws if this is not the key it was sealed with, or the
    /// bytes were changed.
    public func unseal(_ sealed: [UInt8], keyID: String) throws(KeyEncryptionKeyError) -> [UInt8] {
        guard sealed.first == Self.version, sealed.count > 1 + 12 + 16 else {
            throw KeyEncryptionKeyError(
                .cannotUnseal,
                "Signing key \(keyID) is not in the sealed format this version reads."
            )
        }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.dropFirst())
            return Array(try AES.GCM.open(box, using: key, authenticating: Array(keyID.utf8)))
        } catch {
            throw KeyEncryptionKeyError(
                .cannotUnseal,
                "The key-encryption key does not open signing key \(keyID): it is not the key the signing keys "
                    + "were sealed with (or the stored key was altered)."
            )
        }
    }
}

/// Why a key-encryption key cannot be read, written or used.
public struct KeyEncryptionKeyError: CodedError {
    /// A stable code, safe for logs and metric labels.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The key is not 32 bytes of base64, or its file cannot be read or written.
        public static let invalidKey = Code("invalid_key")
        /// A signing key cannot be opened: the wrong key-encryption key, none given, an altered record, or a key
        /// FleetAuth does not hold.
        public static let cannotUnseal = Code("cannot_unseal")
    }

    /// What went wrong.
    public let code: Code
    /// What went wrong, naming the file or the signing key; never key material.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
