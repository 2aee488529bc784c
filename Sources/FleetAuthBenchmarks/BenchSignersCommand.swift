import ArgumentParser
import FleetAuthCore
import FleetAuthIAM
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetEngineEmulator
import FleetTokenServer
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

extension BenchCommand {
    /// `fleetauth bench signers`: the keyless signers next to a local key, in one run.
    struct Signers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signers",
            abstract: "Mints/s with a PKCS#11 key (SoftHSM2) and through IAM signJwt, next to a local key, in one run.",
            discussion: """
                Local key and PKCS#11: every core mints (one task per core) for --seconds; the figure is the best \
                of --rounds. PKCS#11 uses --pkcs11 URI, or a SoftHSM2 token of its own when SoftHSM2 is installed. \
                IAM: --in-flight mints at a time through IAMCredentialsSigner against the emulator's signJwt and \
                metadata server, started in this process on loopback (so the emulator's own RSA signature shares \
                the machine): mints/s, p50 and p99. Run it from a release build.
                """
        )

        @Option(help: "Seconds per measurement.") var seconds: Double = 2
        @Option(help: "Rounds; each figure is the best round.") var rounds: Int = 3
        @Option(help: "Mints in flight through IAM.") var inFlight: Int = 64
        @Option(help: "A PKCS#11 key to measure instead of a SoftHSM2 token of the benchmark's own.") var pkcs11:
            String?

        func validate() throws {
            if rounds < 1 || seconds <= 0 || inFlight < 1 {
                throw ValidationError("--rounds, --seconds and --in-flight must be positive.")
            }
        }

        func run() async throws {
            #if DEBUG
                say(
                    "warning: this is a debug build; run `swift run -c release fleetauth bench signers` for real figures\n"
                )
            #endif
            let cores = ProcessInfo.processInfo.activeProcessorCount
            let type = try FleetEngineTokenType.driver(vehicleID: "vehicle-000042")
            let key = try ServiceAccountKey.generate(projectID: "bench-project", name: "bench-driver")
            let local = try FleetEngineTokenMinter(signer: LocalKeySigner(key: key))
            let hsm = try await pkcs11Minter()
            say(
                "FleetAuth signer benchmark: RS256 driver tokens, \(cores) cores, best of \(rounds) rounds of \(seconds) s\n"
            )
            var best = (local: 0.0, pkcs11: 0.0)
            for _ in 0..<rounds {
                best.local = max(best.local, try await Self.parallelRate(local, type, tasks: cores, seconds: seconds))
                if let hsm {
                    best.pkcs11 = max(
                        best.pkcs11,
                        try await Self.parallelRate(hsm, type, tasks: cores, seconds: seconds)
                    )
                }
            }
            say("signer".padding(toLength: 58, withPad: " ", startingAt: 0) + "  mints/s    p50 ms    p99 ms  ratio")
            say(Self.row("local key (LocalKeySigner), \(cores) tasks", best.local, nil, nil, ""))
            if hsm != nil {
                say(
                    Self.row(
                        "PKCS#11 (\(pkcs11 == nil ? "SoftHSM2" : "given token")), \(cores) tasks",
                        best.pkcs11,
                        nil,
                        nil,
                        BenchCommand.JWT.ratio(best.pkcs11, best.local, "local key (goal ≥ 0.8)")
                    )
                )
                // SoftHSM2 signs with the system's OpenSSL libcrypto: what that library does on every core is the
                // module's own ceiling, and the gap between the two is the module's (it re-imports the key for each
                // signature), not the signer's — perf shows under 1 % of the time in FleetAuth's glue.
                if pkcs11 == nil,
                    let speed = try BenchCommand.JWT.opensslSpeed(seconds: max(1, Int(seconds)), maskIFMA: false)
                {
                    let ceiling = speed.sign * Double(cores)
                    say(
                        Self.row(
                            "openssl rsa2048 sign × \(cores) cores (SoftHSM's libcrypto)",
                            ceiling,
                            nil,
                            nil,
                            ""
                        )
                    )
                    say(
                        String(repeating: " ", count: 80)
                            + BenchCommand.JWT.ratio(best.pkcs11, ceiling, "its libcrypto's raw signing")
                    )
                }
            } else {
                say("PKCS#11: skipped (SoftHSM2 is not installed and no --pkcs11 URI was given)")
            }
            let iam = try await iamRun(key: key, type: type)
            say(
                Self.row(
                    "IAM signJwt via the emulator, \(inFlight) in flight",
                    iam.rate,
                    iam.p50,
                    iam.p99,
                    BenchCommand.JWT.ratio(iam.rate, best.local, "local key")
                )
            )
        }

        static func row(_ name: String, _ rate: Double, _ p50: Double?, _ p99: Double?, _ note: String) -> String {
            name.padding(toLength: 58, withPad: " ", startingAt: 0) + String(format: "%9.0f", rate)
                + (p50.map { String(format: " %9.2f", $0) } ?? String(repeating: " ", count: 10))
                + (p99.map { String(format: " %9.2f", $0) } ?? String(repeating: " ", count: 10)) + "  " + note
        }

        /// The PKCS#11 minter: the given URI, or a new key in a SoftHSM2 token of this run's own.
        func pkcs11Minter() async throws -> FleetEngineTokenMinter? {
            let email = "bench-hsm@bench-project.iam.gserviceaccount.com"
            if let pkcs11 {
                return try FleetEngineTokenMinter(
                    signer: try await PKCS11Signer(uri: PKCS11URI(pkcs11), serviceAccountEmail: email)
                )
            }
            guard SoftHSM.isAvailable else { return nil }
            let token = try SoftHSM.makeToken(label: "bench")
            setenv("SOFTHSM2_CONF", token.environment["SOFTHSM2_CONF"]!, 1)
            let uri = try PKCS11URI(token.uri(object: "bench"))
            _ = try await PKCS11Signer.generateKeyPair(uri: uri)
            return try FleetEngineTokenMinter(signer: try await PKCS11Signer(uri: uri, serviceAccountEmail: email))
        }

        /// Mints/s with `tasks` tasks minting at once for `seconds` (after a warm-up).
        static func parallelRate(
            _ minter: FleetEngineTokenMinter,
            _ type: FleetEngineTokenType,
            tasks: Int,
            seconds: Double
        ) async throws -> Double {
            let perTask = try await withThrowingTaskGroup(of: Double.self) { group in
                for _ in 0..<tasks {
                    group.addTask {
                        try await BenchCommand.JWT.rate(seconds: seconds) { _ = try await minter.mint(type) }
                    }
                }
                return try await group.reduce(0, +)
            }
            return perTask
        }

        /// `inFlight` tasks minting through IAM against an emulator on loopback for `seconds` per round; the best
        /// round's rate with its latency percentiles (ms).
        func iamRun(key: ServiceAccountKey, type: FleetEngineTokenType) async throws -> (
            rate: Double, p50: Double, p99: Double
        ) {
            let iam = try await LocalIAM(keys: [key], signableAccounts: [key.clientEmail])
            let emulator = EmulatorServer(
                accounts: [
                    (
                        TrustedServiceAccount(email: key.clientEmail, project: key.projectID, roles: [.driverSdkUser]),
                        [key.verificationKey]
                    )
                ],
                store: try SQLiteFleetStore(inMemory: ()),
                iam: iam
            )
            let ports = AsyncStream.makeStream(of: Int.self)
            let group = ServiceGroup(
                services: [try emulator.iamApplication(port: 0) { ports.continuation.yield($0) }],
                logger: .quiet(label: "bench")
            )
            return try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var iterator = ports.stream.makeAsyncIterator()
                guard let port = await iterator.next() else { throw BenchmarkFailure("the emulator did not start") }
                // As the token server signs: each answer's signature checked against the published keys.
                let signer = KeylessSigner.iam(
                    IAMCredentialsSigner(
                        serviceAccountEmail: key.clientEmail,
                        accessTokens: AccessTokenSource(credentials: .metadataServer(host: "127.0.0.1:\(port)")),
                        configuration: .init(baseURL: "http://127.0.0.1:\(port)")
                    ),
                    googleKeysURL: "http://127.0.0.1:\(port)"
                ).signer
                let minter = try FleetEngineTokenMinter(signer: signer)
                _ = try await minter.mint(type)
                var best: (rate: Double, p50: Double, p99: Double) = (0, 0, 0)
                for _ in 0..<rounds {
                    let round = try await Self.latencyRun(minter, type, inFlight: inFlight, seconds: seconds)
                    if round.rate > best.rate { best = round }
                }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return best
            }
        }

        static func latencyRun(
            _ minter: FleetEngineTokenMinter,
            _ type: FleetEngineTokenType,
            inFlight: Int,
            seconds: Double
        ) async throws -> (rate: Double, p50: Double, p99: Double) {
            let clock = ContinuousClock()
            let start = clock.now
            let end = start.advanced(by: .milliseconds(Int64(seconds * 1000)))
            let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
                for _ in 0..<inFlight {
                    group.addTask {
                        var mine: [Double] = []
                        while clock.now < end {
                            let before = clock.now
                            _ = try await minter.mint(type)
                            let elapsed = before.duration(to: clock.now)
                            mine.append(
                                Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds)
                                    * 1000
                            )
                        }
                        return mine
                    }
                }
                return try await group.reduce(into: [Double]()) { $0 += $1 }.sorted()
            }
            let elapsed = start.duration(to: clock.now)
            let total = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            guard !latencies.isEmpty else { throw BenchmarkFailure("no mint finished") }
            func percentile(_ p: Double) -> Double {
                latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
            }
            return (Double(latencies.count) / total, percentile(0.5), percentile(0.99))
        }
    }
}
