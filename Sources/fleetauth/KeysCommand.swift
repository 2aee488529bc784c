import ArgumentParser
import FleetAuthCore
import FleetAuthJWT
import FleetTokenServer

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create service-account key files and publish their public keys.",
        subcommands: [Create.self, JWKS.self, Rotate.self, CreateKEK.self]
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
        var project: String

        @Option(help: "The service account's name (the part of the email before @).")
        var name: String

        @Option(help: "Where to write the key file. Default: NAME.json in the current directory.")
        var out: String?

        func run() async throws {
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
