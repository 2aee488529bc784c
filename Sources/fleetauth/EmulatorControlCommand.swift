import ArgumentParser
import FleetAuthCore
import FleetAuthJWT
import FleetEngineEmulator
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `fleetauth emulator control …`: the local Fleet Engine's test controls (`/emulator/v1/`), one command per
/// operation, for a person or a script between tests.
struct EmulatorControlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract:
            "Steer a running local Fleet Engine started with --test-controls (fleetauth serve and demo start it so).",
        discussion: """
            Each operation is a call to the emulator's /emulator/v1/ routes with a server token, minted from the \
            server key the emulator provisioned in its data directory unless --key or --token names another. The \
            controls delete and change data: an emulator serves them only when started with --test-controls.
            """,
        subcommands: [Reset.self]
    )

    /// Where the emulator is and what signs the control token: every operation's options.
    struct Connection: ParsableArguments {
        @Option(help: "The emulator's REST base URL.") var emulator: String = "http://127.0.0.1:8787"
        // Not --data and --project: those are `fleetauth emulator`'s own, and the parser gives a name to the parent.
        @Option(help: "The keys the emulator provisioned, whose service-super-user.json signs the token.")
        var keys: String = "fleet-engine-data/keys"
        @Option(help: "A service-account key file with a server role. Default: KEYS/service-super-user.json.")
        var key: String?
        @Option(help: "A server token to send, instead of minting one from a key.") var token: String?
        @Option(help: "The provider (project) to steer. Default: the key's project.") var provider: String?

        func validate() throws {
            guard URL(string: emulator)?.scheme.map({ $0 == "http" || $0 == "https" }) == true else {
                throw ValidationError("--emulator must be an http:// or https:// URL, such as http://127.0.0.1:8787.")
            }
            if token != nil, key != nil { throw ValidationError("Send a --token or sign with a --key, not both.") }
            if token != nil, provider == nil { throw ValidationError("With --token, name the --provider.") }
        }

        /// The provider and a server token for it.
        func credentials() throws -> (project: String, token: String) {
            if let token, let provider { return (provider, token) }
            let path = key ?? keys + "/" + DefaultProvisioning.accountName(for: .serviceSuperUser) + ".json"
            let (serviceAccount, minter) = try signingKey(
                path,
                for: "the control token",
                otherwise: "name the emulator's keys directory with --keys, a key with --key, or pass a --token"
            )
            return (provider ?? serviceAccount.projectID, try minter.mintSynchronously(.server).jwt)
        }

        /// Sends `method` `path` (under the emulator's base URL) with the token and `body`; the answer's JSON, or
        /// the emulator's error in one line.
        func call(_ method: String, _ path: String, token: String, body: JSONObject? = nil) async throws -> JSONObject {
            guard let url = URL(string: (emulator.hasSuffix("/") ? String(emulator.dropLast()) : emulator) + path)
            else {
                throw CLIError("\(emulator) is not a URL.")
            }
            var request = URLRequest(url: url, timeoutInterval: 60)
            request.httpMethod = method
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            if let body {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(body.jsonBytes)
            }
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await URLSession.shared.cancellationSafeData(for: request)
            } catch {
                throw CLIError("Cannot reach the emulator at \(emulator): \(error.localizedDescription)")
            }
            let answer =
                data.isEmpty ? JSONObject() : try? StrictJSONParser(maximumDepth: 128).parseObject([UInt8](data))
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200, let answer else {
                let message = answer?["error"]?.objectValue?["message"]?.stringValue
                // An emulator without the controls has no such route: a 404 that names nothing.
                if status == 404, message?.isEmpty ?? true {
                    throw CLIError(
                        "The emulator at \(emulator) has no test controls: start it with --test-controls (fleetauth serve and demo do)."
                    )
                }
                throw CLIError(
                    "The emulator answered \(status) to \(method) \(path): \(message ?? String(decoding: data.prefix(300), as: UTF8.self))"
                )
            }
            return answer
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete every vehicle, trip, delivery vehicle and task of the provider, and its request log.",
            discussion: "Other providers are untouched; the emulator goes on running."
        )

        @OptionGroup var connection: Connection

        func run() async throws {
            let (project, token) = try connection.credentials()
            let started = ContinuousClock.now
            _ = try await connection.call("POST", "/emulator/v1/providers/\(project):reset", token: token)
            let milliseconds =
                Double(started.duration(to: .now).components.attoseconds) / 1e15
                + Double(started.duration(to: .now).components.seconds) * 1000
            say("Reset provider \(project) (\(Int(milliseconds.rounded())) ms).")
        }
    }
}

/// The key file at `path` and a minter that signs with it, for a command that mints `purpose` (`the control
/// token`); a key that cannot be read is an error that says what to do `otherwise`.
func signingKey(_ path: String, for purpose: String, otherwise: String) throws -> (
    ServiceAccountKey, FleetEngineTokenMinter
) {
    let serviceAccount: ServiceAccountKey
    do {
        serviceAccount = try ServiceAccountKey(contentsOf: path)
    } catch {
        throw CLIError("Cannot read the key \(path) to sign \(purpose) (\(error)); \(otherwise).")
    }
    return (serviceAccount, try FleetEngineTokenMinter(signer: LocalKeySigner(key: serviceAccount)))
}
