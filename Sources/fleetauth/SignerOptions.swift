import ArgumentParser
import FleetAuthCore
import FleetAuthIAM
import FleetAuthJWT
import FleetTokenServer
import Foundation

/// `--signer FAMILY=iam|pkcs11:URI`, `--service-account FAMILY=EMAIL`, `--key-id FAMILY=ID` and where IAM and
/// Google's key sets are: the token server's families that sign without a key file.
struct KeylessSignerOptions: ParsableArguments {
    @Option(
        help: """
            Sign a family's tokens without holding its key: FAMILY=iam (IAM signJwt, with Application Default \
            Credentials) or FAMILY=pkcs11:URI (a key in an HSM or Cloud KMS, RFC 7512 URI with module-path). FAMILY \
            is driver, consumer, server, delivery, delivery-server or reader; repeatable, one per family. Needs \
            --service-account.
            """
    )
    var signer: [String] = []
    @Option(help: "The service account a --signer family signs as: FAMILY=EMAIL (repeatable).")
    var serviceAccount: [String] = []
    @Option(
        help: """
            The kid of a pkcs11 family's tokens: FAMILY=ID, the key ID Google assigned when its certificate was \
            uploaded (default: the key's RFC 7638 thumbprint).
            """
    )
    var keyID: [String] = []
    @Option(help: "The IAM Credentials API base URL (default https://iamcredentials.googleapis.com).")
    var iamCredentialsURL: String = IAMCredentialsSigner.Configuration.googleBaseURL
    @Option(
        help: """
            Where Google publishes service accounts' public keys; the emulator's trust file names \
            URL/service_accounts/v1/metadata/jwk/EMAIL for iam families (default https://www.googleapis.com).
            """
    )
    var googleKeysURL: String = KeylessSigner.googleKeysURL

    /// Parses the FAMILY=VALUE pairs; errors name the flag.
    func pairs(_ values: [String], flag: String) throws -> [TokenFamily: String] {
        var result: [TokenFamily: String] = [:]
        for value in values {
            guard let equals = value.firstIndex(of: "=") else {
                throw ValidationError(
                    "\(flag) \(value) must be FAMILY=VALUE (FAMILY: \(TokenFamily.names))."
                )
            }
            let name = String(value[..<equals])
            guard let family = TokenFamily(rawValue: name) else {
                throw ValidationError(
                    "\(flag) names the family \"\(name)\"; families are \(TokenFamily.names)."
                )
            }
            guard result.updateValue(String(value[value.index(after: equals)...]), forKey: family) == nil else {
                throw ValidationError("\(flag) is given twice for the \(family) family.")
            }
        }
        return result
    }

    func validate() throws {
        let signers = try pairs(signer, flag: "--signer")
        let accounts = try pairs(serviceAccount, flag: "--service-account")
        let keyIDs = try pairs(keyID, flag: "--key-id")
        for (family, kind) in signers {
            guard kind == "iam" || kind.hasPrefix("pkcs11:") else {
                throw ValidationError(
                    SecretRedaction.redacted(
                        "--signer \(family)=\(kind.prefix(40)) must be \(family)=iam or \(family)=pkcs11:URI."
                    )
                )
            }
            guard let email = accounts[family], !email.isEmpty else {
                throw ValidationError("--signer \(family)=… needs --service-account \(family)=EMAIL.")
            }
            guard email.contains("@") else {
                throw ValidationError("--service-account \(family)=\(email) is not a service account email.")
            }
        }
        for family in accounts.keys where signers[family] == nil {
            throw ValidationError("--service-account \(family)=… has no --signer \(family)=iam|pkcs11:URI.")
        }
        for family in keyIDs.keys where !(signers[family]?.hasPrefix("pkcs11:") ?? false) {
            throw ValidationError("--key-id \(family)=… applies to a --signer \(family)=pkcs11:URI family only.")
        }
    }

    /// Builds the signers: PKCS#11 tokens are opened (and their keys checked) now; IAM's credentials are looked up
    /// now and tried once, a failure being only a warning (IAM or the metadata server may be briefly down).
    func keylessSigners(environment: [String: String]? = nil) async throws -> [TokenFamily: KeylessSigner] {
        let signers = try pairs(signer, flag: "--signer")
        let accounts = try pairs(serviceAccount, flag: "--service-account")
        let keyIDs = try pairs(keyID, flag: "--key-id")
        var result: [TokenFamily: KeylessSigner] = [:]
        var accessTokens: AccessTokenSource?
        for family in TokenFamily.allCases {
            guard let kind = signers[family], let email = accounts[family] else { continue }
            result[family] = try await Self.signer(
                kind: kind,
                email: email,
                keyID: keyIDs[family],
                iamCredentialsURL: iamCredentialsURL,
                googleKeysURL: googleKeysURL,
                environment: environment,
                accessTokens: &accessTokens,
                family: "the \(family) family"
            )
        }
        return result
    }

    /// One signer; `accessTokens` is shared by every IAM signer of the process.
    static func signer(
        kind: String,
        email: String,
        keyID: String?,
        iamCredentialsURL: String,
        googleKeysURL: String,
        environment: [String: String]?,
        accessTokens: inout AccessTokenSource?,
        family: String
    ) async throws -> KeylessSigner {
        do {
            if kind == "iam" {
                if accessTokens == nil {
                    let credentials = try GoogleCredentials.applicationDefault(environment: environment)
                    let source = AccessTokenSource(credentials: credentials)
                    accessTokens = source
                    do {
                        _ = try await source.token()
                    } catch {
                        warn(
                            "Warning: no access token from \(credentials.summary) yet (\(error)); token requests "
                                + "answer 503 until signing works."
                        )
                    }
                }
                return .iam(
                    IAMCredentialsSigner(
                        serviceAccountEmail: email,
                        accessTokens: accessTokens!,
                        configuration: .init(baseURL: iamCredentialsURL)
                    ),
                    googleKeysURL: googleKeysURL
                )
            }
            let uri = try PKCS11URI(String(kind))
            let signer = try await PKCS11Signer(uri: uri, serviceAccountEmail: email, keyID: keyID)
            // Once the signer works (a start that fails says only why, in one line).
            PINWarning.warnIfInline(uri)
            return .pkcs11(signer)
        } catch {
            throw CLIError(SecretRedaction.redacted("\(family): \(error.message)"))
        }
    }
}

/// The warning, once per process, that a PIN given inline (`pin-value=` on the command line or in the environment)
/// is readable by other local users.
enum PINWarning {
    nonisolated(unsafe) private static var warned = false
    private static let lock = NSLock()

    static func warnIfInline(_ uri: PKCS11URI) {
        guard uri.pinValue != nil else { return }
        let first = lock.withLock {
            defer { warned = true }
            return !warned
        }
        if first {
            warn(
                "Warning: the PKCS#11 PIN is given inline (pin-value=): a command line or environment is readable by "
                    + "other local users (ps, /proc). Put it in a file readable only by this user and name it with "
                    + "pin-source=file:/path instead."
            )
        }
    }
}

/// Prints a line to standard error at once.
func warn(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
