import ArgumentParser
import FleetAuthCore
import FleetAuthJWT
import FleetTokenServer
import Foundation

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create service-account key files and publish their public keys.",
        subcommands: [Create.self, Certificate.self, JWKS.self, Rotate.self, CreateKEK.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new service-account key file (RSA-2048, Google's JSON format, mode 0600).",
            discussion: """
                The service account's email is NAME@PROJECT.iam.gserviceaccount.com and its key ID a random \
                40-hex-digit private_key_id. The file is never overwritten.
                """
        )

        @Option(help: "The project ID, which is also the Fleet Engine provider ID.")
        var project: String?

        @Option(help: "The service account's name (the part of the email before @).")
        var name: String?

        @Option(help: "Where to write the key file. Default: NAME.json in the current directory.")
        var out: String?

        @Option(
            help: """
                Instead of a key file, generate an RSA-2048 key pair inside the PKCS#11 token this RFC 7512 URI \
                names (object= labels it; id= or 16 random bytes; needs a PIN): sensitive, never extractable.
                """
        )
        var pkcs11: String?

        func validate() throws {
            if pkcs11 != nil {
                if project != nil || name != nil || out != nil {
                    throw ValidationError(
                        "--pkcs11 creates the key in the token: --project, --name and --out do not apply."
                    )
                }
            } else if project == nil || name == nil {
                throw ValidationError("Give --project and --name (a key file), or --pkcs11 URI (a key in a token).")
            }
        }

        static func createInToken(_ text: String) async throws(SigningError) -> (uri: PKCS11URI, thumbprint: String) {
            let uri = try PKCS11URI(text)
            let created = try await PKCS11Signer.generateKeyPair(uri: uri)
            PINWarning.warnIfInline(uri)
            let signer = try await PKCS11Signer(uri: created, serviceAccountEmail: "", sessions: 1)
            return (created, signer.publicKey.jwkThumbprint)
        }

        func run() async throws {
            if let pkcs11 {
                let created: (uri: PKCS11URI, thumbprint: String)
                do {
                    created = try await Self.createInToken(pkcs11)
                } catch {
                    throw CLIError(error.message)
                }
                print("created an RSA-2048 key pair in the token: \(created.uri)")
                print("key thumbprint (the kid until Google assigns one): \(created.thumbprint)")
                print("next: fleetauth keys certificate --pkcs11 URI --service-account EMAIL --out cert.pem, then")
                print("      gcloud iam service-accounts keys upload cert.pem --iam-account EMAIL")
                return
            }
            guard let project, let name else { return }
            let key: ServiceAccountKey
            do {
                key = try ServiceAccountKey.generate(projectID: project, name: name)
            } catch {
                throw CLIError(error.message)
            }
            let path = out ?? "\(name).json"
            do {
                try key.write(to: path)
            } catch {
                throw CLIError(error.message)
            }
            print("wrote \(path): \(key.clientEmail), key ID \(key.privateKeyID)")
        }
    }

    struct Certificate: AsyncParsableCommand {
        static func make(_ uri: String, email: String, days: Int) async throws(SigningError) -> SelfSignedCertificate {
            let parsed = try PKCS11URI(uri)
            let signer = try await PKCS11Signer(uri: parsed, serviceAccountEmail: email, sessions: 1)
            PINWarning.warnIfInline(parsed)
            do {
                return try await signer.certificate(validity: TimeInterval(days) * 86400)
            } catch let error as SigningError {
                throw error
            } catch {
                throw .configuration("The certificate could not be signed: \(error)")
            }
        }

        static let configuration = CommandConfiguration(
            abstract: "Write a self-signed X.509 certificate for a key in a PKCS#11 token, signed inside the token.",
            discussion: """
                Upload it to the service account with `gcloud iam service-accounts keys upload FILE --iam-account \
                EMAIL`; Google answers with the key ID to give the token server as --key-id FAMILY=ID. The subject is \
                CN=EMAIL. The file is never overwritten.
                """
        )

        @Option(help: "The key's RFC 7512 PKCS#11 URI (with module-path and a PIN).") var pkcs11: String
        @Option(help: "The service account the key is for (the certificate's CN).") var serviceAccount: String
        @Option(help: "Where to write the PEM certificate.") var out: String
        @Option(help: "Validity in days.") var days: Int = 3650

        func run() async throws {
            guard !FileManager.default.fileExists(atPath: out) else {
                throw CLIError("\(out) exists; it was left as it is.")
            }
            let certificate: SelfSignedCertificate
            do {
                certificate = try await Self.make(pkcs11, email: serviceAccount, days: days)
            } catch {
                throw CLIError(error.message)
            }
            do {
                try Data(certificate.pemRepresentation.utf8).write(
                    to: URL(fileURLWithPath: out),
                    options: .withoutOverwriting
                )
            } catch {
                throw CLIError("\(out) cannot be written: \(error.localizedDescription)")
            }
            print("wrote \(out): a certificate for \(serviceAccount), signed inside the token")
        }
    }

    struct CreateKEK: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-kek",
            abstract: "Write a new key-encryption key: 32 random bytes in base64, mode 0600.",
            discussion: """
                The token server seals its signing keys with it (AES-256-GCM) when they are kept in PostgreSQL: give \
                every instance the same file with --key-encryption-key-file, or its contents in \
                FLEETAUTH_KEY_ENCRYPTION_KEY. Keep it out of the database and its backups. The file is never \
                overwritten.
                """
        )

        @Option(help: "Where to write the key.") var out: String

        func run() async throws {
            do {
                try KeyEncryptionKey.generate().write(to: out)
            } catch {
                throw CLIError(error.message)
            }
            print("wrote \(out): a key-encryption key (keep it secret, and the same on every instance)")
        }
    }

    struct JWKS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "jwks",
            abstract: "Print the JWK set of the public keys of service-account key files."
        )

        @Argument(help: "Service-account key files.")
        var keyFiles: [String]

        func validate() throws {
            if keyFiles.isEmpty { throw ValidationError("Name at least one key file.") }
        }

        func run() async throws {
            let keys = try keyFiles.map { try loadKey($0) }
            print(JSONValue.object(JSONWebKeySet(keys.map(\.verificationKey)).jsonObject).prettyText())
        }
    }
}

/// Reads a key file, or the Application Default Credentials key when `path` is nil.
func loadKey(_ path: String?) throws -> ServiceAccountKey {
    do {
        if let path { return try ServiceAccountKey(contentsOf: path) }
        return try ServiceAccountKey.applicationDefault()
    } catch {
        throw CLIError(error.message)
    }
}
