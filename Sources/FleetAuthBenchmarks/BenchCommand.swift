public import ArgumentParser
import Crypto
import CryptoExtras
import FleetAuthCore
import FleetAuthJWT
import Foundation

/// Prints a line and flushes it at once, so a benchmark shows progress even when its output is a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// A benchmark that could not measure what it set out to (a failed request, a wrong result): it exits 1.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `fleetauth bench`: FleetAuth measured against its references in the same run.
///
/// The benchmarks live in a module of their own, beside the product code rather than in it, and the `fleetauth`
/// binary links it: they measure exactly the code that ships, built once, and the dependencies they add (the
/// load generator's NIO client, raw swift-crypto) are already in the binary for the servers and the JWT module.
public struct BenchCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure FleetAuth against its reference implementations, in one run.",
        subcommands: [
            JWT.self, Signers.self, Emulator.self, Scale.self, Deliveries.self, TokenServer.self, Client.self,
        ]
    )

    struct JWT: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "jwt",
            abstract: "Mints/s and full verifies/s on one core, next to raw swift-crypto RSA and `openssl speed`.",
            discussion: """
                Run it from a release build: swift run -c release fleetauth bench jwt. Every figure is measured \
                in this run on one core: a single task runs each loop for --seconds after a warm-up.
                """
        )

        @Option(help: "Seconds per loop in each round.") var seconds: Double = 1
        @Option(help: "Rounds; every figure is the best round, which filters out interference.") var rounds: Int = 5
        @Flag(help: "Do not run `openssl speed`.") var skipOpenssl = false
        @Option(help: "Run only one loop, for profiling: mint or verify.") var only: String?

        func validate() throws {
            if rounds < 1 || seconds <= 0 { throw ValidationError("--rounds and --seconds must be positive.") }
        }

        func run() async throws {
            if let only {
                try await Self.profile(only, seconds: seconds * Double(rounds))
            } else {
                try await Self.measure(seconds: seconds, rounds: rounds, openssl: !skipOpenssl)
            }
        }

        /// The benchmark's fixture: a driver token, its key, and the raw primitives over the same bytes.
        struct Setup {
            let minter: FleetEngineTokenMinter
            let type: FleetEngineTokenType
            let now: Date
            let token: String
            let verifier: FleetEngineTokenVerifier
            let privateKey: _RSA.Signing.PrivateKey
            let signingInput: [UInt8]
            let signature: _RSA.Signing.RSASignature
            /// The same key in libcrypto, when it loads.
            let libcryptoKey: Libcrypto.PrivateKey?

            init() async throws {
                let key = try ServiceAccountKey.generate(projectID: "bench-project", name: "bench-driver")
                libcryptoKey = Libcrypto.PrivateKey(key)
                minter = try FleetEngineTokenMinter(signer: LocalKeySigner(key: key))
                type = try FleetEngineTokenType.driver(vehicleID: "vehicle-000042")
                now = Date()
                token = try await minter.mint(type, now: now).jwt
                verifier = FleetEngineTokenVerifier(trustStore: TrustStore(serviceAccountKeys: [key]))
                privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: key.jsonObject["private_key"]!.stringValue!)
                signingInput = Array(token.utf8[..<token.utf8.lastIndex(of: UInt8(ascii: "."))!])
                signature = try privateKey.signature(for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5)
                _ = try verifier.verify(token, now: now)
            }

            var nowSeconds: Int64 { Int64(now.timeIntervalSince1970) }
        }

        /// One loop alone, so a profiler sees nothing else.
        static func profile(_ loop: String, seconds: Double) async throws {
            let setup = try await Setup()
            switch loop {
            case "mint":
                let value = try await rate(seconds: seconds) {
                    _ = try await setup.minter.mint(setup.type, now: setup.now)
                }
                say(String(format: "mint: %.0f/s", value))
            case "verify":
                let value = try await rate(seconds: seconds) {
                    _ = try setup.verifier.verify(setup.token, nowSeconds: setup.nowSeconds)
                }
                say(String(format: "verify: %.0f/s", value))
            case "wrapper":
                let key = setup.verifier.trustStore.keys(
                    forIssuer: try CompactJWS(setup.token).payloadObject()["iss"]!.stringValue!
                )![0]
                let signature = Array(setup.signature.rawRepresentation)
                let value = try await rate(seconds: seconds) {
                    guard setup.signingInput.withUnsafeBytes({ key.isValidRS256Signature(signature, for: $0) }) else {
                        throw BenchmarkFailure("wrapper verification failed")
                    }
                }
                say(String(format: "wrapper: %.0f/s", value))
            case "raw":
                let publicKey = setup.privateKey.publicKey
                let value = try await rate(seconds: seconds) {
                    guard
                        publicKey.isValidSignature(
                            setup.signature,
                            for: SHA256.hash(data: setup.signingInput),
                            padding: .insecurePKCS1v1_5
                        )
                    else {
                        throw BenchmarkFailure("raw verification failed")
                    }
                }
                say(String(format: "raw+hash: %.0f/s", value))
            case "parse":
                let value = try await rate(seconds: seconds) { _ = try CompactJWS(setup.token).payloadObject() }
                say(String(format: "parse: %.0f/s", value))
            default:
                throw ValidationError("--only takes mint, verify or parse")
            }
        }

        static func measure(seconds: Double, rounds: Int, openssl: Bool) async throws {
            #if DEBUG
                say("warning: this is a debug build; run `swift run -c release fleetauth bench jwt` for real figures\n")
            #endif
            let setup = try await Setup()
            let publicKey = setup.privateKey.publicKey
            let digest = SHA256.hash(data: setup.signingInput)
            say(
                "FleetAuth JWT benchmark: RS256, RSA-2048, \(setup.token.utf8.count)-byte driver token, one core; "
                    + "best of \(rounds) rounds of \(seconds) s per loop, loops interleaved\n"
            )
            say(
                "Minting signs with \(RSABackend.current.rawValue) (this CPU has \(RSABackend.cpuHasIFMA ? "" : "no ")"
                    + "AVX-512 IFMA; FLEETAUTH_RSA_BACKEND chooses); libcrypto: "
                    + (Libcrypto.version ?? "not loaded: \(Libcrypto.load() ?? "")") + "\n"
            )
            var best = (mint: 0.0, rawSign: 0.0, verify: 0.0, rawVerify: 0.0, libcryptoSign: 0.0)
            for _ in 0..<rounds {
                if let key = setup.libcryptoKey {
                    best.libcryptoSign = max(
                        best.libcryptoSign,
                        try await rate(seconds: seconds) {
                            guard key.signSHA256(setup.signingInput) != nil else {
                                throw BenchmarkFailure("libcrypto could not sign")
                            }
                        }
                    )
                }
                best.verify = max(
                    best.verify,
                    try await rate(seconds: seconds) {
                        _ = try setup.verifier.verify(setup.token, nowSeconds: setup.nowSeconds)
                    }
                )
                best.rawVerify = max(
                    best.rawVerify,
                    try await rate(seconds: seconds) {
                        guard publicKey.isValidSignature(setup.signature, for: digest, padding: .insecurePKCS1v1_5)
                        else {
                            throw BenchmarkFailure("raw verification failed")
                        }
                    }
                )
                best.mint = max(
                    best.mint,
                    try await rate(seconds: seconds) {
                        _ = try await setup.minter.mint(setup.type, now: setup.now)
                    }
                )
                best.rawSign = max(
                    best.rawSign,
                    try await rate(seconds: seconds) {
                        _ = try setup.privateKey.signature(
                            for: SHA256.hash(data: setup.signingInput),
                            padding: .insecurePKCS1v1_5
                        )
                    }
                )
            }
            var rows: [(String, Double, String)] = [
                (
                    "FleetAuth mint (claims + JSON + base64url + sign)", best.mint,
                    ratio(best.mint, best.rawSign, "raw swift-crypto sign")
                ),
                ("raw swift-crypto RSA-2048 PKCS#1 v1.5 sign", best.rawSign, ""),
                (
                    "FleetAuth full verify (parse + policy + signature)", best.verify,
                    ratio(best.verify, best.rawVerify, "raw swift-crypto verify")
                ),
                ("raw swift-crypto RSA-2048 PKCS#1 v1.5 verify", best.rawVerify, ""),
            ]
            if best.libcryptoSign > 0 {
                rows.append(("raw libcrypto (dlopen) RSA-2048 PKCS#1 v1.5 sign", best.libcryptoSign, ""))
                rows[0].2 += "; " + ratio(best.mint, best.libcryptoSign, "raw libcrypto sign")
            }
            if openssl {
                let secondsArgument = max(1, Int(seconds.rounded(.up)))
                var speed: (sign: Double, verify: Double)?
                var masked: (sign: Double, verify: Double)?
                for _ in 0..<rounds {
                    if let run = try opensslSpeed(seconds: secondsArgument, maskIFMA: false) {
                        speed = (max(speed?.sign ?? 0, run.sign), max(speed?.verify ?? 0, run.verify))
                    }
                    if let run = try opensslSpeed(seconds: secondsArgument, maskIFMA: true) {
                        masked = (max(masked?.sign ?? 0, run.sign), max(masked?.verify ?? 0, run.verify))
                    }
                }
                if let speed {
                    if let index = rows.firstIndex(where: { $0.0.hasPrefix("raw libcrypto") }) {
                        rows[index].2 = ratio(rows[index].1, speed.sign, "openssl sign")
                    }
                    rows.append(("openssl speed rsa2048 sign", speed.sign, ""))
                    rows.append(("openssl speed rsa2048 verify", speed.verify, ""))
                    rows[0].2 += "; " + ratio(best.mint, speed.sign, "openssl sign")
                    rows[2].2 += "; " + ratio(best.verify, speed.verify, "openssl verify")
                    rows[1].2 = ratio(best.rawSign, speed.sign, "openssl sign")
                    rows[3].2 = ratio(best.rawVerify, speed.verify, "openssl verify")
                }
                if let masked {
                    rows.append(("openssl speed rsa2048 sign, AVX-512 IFMA masked", masked.sign, ""))
                    rows[0].2 += "; " + ratio(best.mint, masked.sign, "openssl sign without IFMA")
                }
            }
            say("operation".padding(toLength: 52, withPad: " ", startingAt: 0) + "    ops/s     µs/op  ratio")
            for (name, value, note) in rows {
                let line =
                    name.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + String(format: "%9.0f %9.1f  ", value, 1_000_000 / value) + note
                say(line)
            }
        }

        static func ratio(_ value: Double, _ reference: Double, _ name: String) -> String {
            String(format: "%.2f × %@", value / reference, name)
        }

        /// Runs `body` repeatedly on the calling task for `seconds` after a short warm-up; returns calls per second.
        static func rate(seconds: Double, _ body: () async throws -> Void) async throws -> Double {
            let clock = ContinuousClock()
            let warmUpEnd = clock.now.advanced(by: .milliseconds(300))
            while clock.now < warmUpEnd { try await body() }
            let start = clock.now
            let end = start.advanced(by: .milliseconds(Int64(seconds * 1000)))
            var count = 0
            while true {
                for _ in 0..<16 { try await body() }
                count += 16
                if clock.now >= end { break }
            }
            let elapsed = start.duration(to: clock.now)
            return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }

        /// `openssl speed -seconds N rsa2048`, parsed; `nil` when openssl is not installed.
        static func opensslSpeed(seconds: Int, maskIFMA: Bool) throws -> (sign: Double, verify: Double)? {
            var environment = ProcessInfo.processInfo.environment
            if maskIFMA { environment["OPENSSL_ia32cap"] = ":~0x200000" }
            let result: (status: Int32, output: String)
            do {
                result = try runCapturingOutput(
                    ["openssl", "speed", "-seconds", String(seconds), "rsa2048"],
                    environment: environment
                )
            } catch {
                say("openssl not found; skipping the openssl reference")
                return nil
            }
            let text = result.output
            // "rsa 2048 bits 0.000343s 0.000019s   2912.0  51515.0"
            for line in text.split(separator: "\n") where line.hasPrefix("rsa 2048 bits") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                if fields.count >= 7, let sign = Double(fields[5]), let verify = Double(fields[6]) {
                    return (sign, verify)
                }
            }
            say("could not read `openssl speed` output; skipping the openssl reference")
            return nil
        }
    }
}
