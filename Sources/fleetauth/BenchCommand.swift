import ArgumentParser
import Crypto
import CryptoExtras
import FleetAuthCore
import FleetAuthJWT
import Foundation

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure FleetAuth against its reference implementations, in one run.",
        subcommands: [JWT.self]
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

        @Option(help: "Seconds to run each measurement.") var seconds: Double = 3
        @Flag(help: "Do not run `openssl speed`.") var skipOpenssl = false

        func run() async throws {
            try await Self.measure(seconds: seconds, openssl: !skipOpenssl)
        }

        static func measure(seconds: Double, openssl: Bool) async throws {
            #if DEBUG
            print("warning: this is a debug build; run `swift run -c release fleetauth bench jwt` for real figures\n")
            #endif
            let key = try ServiceAccountKey.generate(projectID: "bench-project", name: "bench-driver")
            let minter = try FleetEngineTokenMinter(signer: LocalKeySigner(key: key))
            let type = try FleetEngineTokenType.driver(vehicleID: "vehicle-000042")
            let now = Date()
            let sample = try await minter.mint(type, now: now)
            let verifier = FleetEngineTokenVerifier(trustStore: TrustStore(serviceAccountKeys: [key]))
            let nowSeconds = Int64(now.timeIntervalSince1970)
            _ = try verifier.verify(sample.jwt, nowSeconds: nowSeconds)

            // The raw primitives, on the same signing input and key.
            let signingInput = Array(sample.jwt.utf8.prefix(while: { $0 != UInt8(ascii: ".") }))
                + [UInt8(ascii: ".")]
                + Array(sample.jwt.split(separator: ".")[1].utf8)
            let privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: key.jsonObject["private_key"]!.stringValue!)
            let publicKey = privateKey.publicKey
            let digest = SHA256.hash(data: signingInput)
            let signature = try privateKey.signature(for: digest, padding: .insecurePKCS1v1_5)

            print("FleetAuth JWT benchmark: RS256, RSA-2048, \(sample.jwt.utf8.count)-byte driver token, one core, \(seconds) s per line\n")
            let mint = try await rate(seconds: seconds) { _ = try await minter.mint(type, now: now) }
            let rawSign = try await rate(seconds: seconds) {
                _ = try privateKey.signature(for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5)
            }
            let verify = try await rate(seconds: seconds) { _ = try verifier.verify(sample.jwt, nowSeconds: nowSeconds) }
            let rawVerify = try await rate(seconds: seconds) {
                guard publicKey.isValidSignature(signature, for: digest, padding: .insecurePKCS1v1_5) else {
                    throw CLIError("raw verification failed")
                }
            }
            var rows: [(String, Double, String)] = [
                ("FleetAuth mint (claims + JSON + base64url + sign)", mint, ratio(mint, rawSign, "raw swift-crypto sign")),
                ("raw swift-crypto RSA-2048 PKCS#1 v1.5 sign", rawSign, ""),
                ("FleetAuth full verify (parse + policy + signature)", verify, ratio(verify, rawVerify, "raw swift-crypto verify")),
                ("raw swift-crypto RSA-2048 PKCS#1 v1.5 verify", rawVerify, ""),
            ]
            if openssl {
                if let speed = try opensslSpeed(seconds: Int(seconds.rounded(.up)), maskIFMA: false) {
                    rows.append(("openssl speed rsa2048 sign", speed.sign, ""))
                    rows.append(("openssl speed rsa2048 verify", speed.verify, ""))
                    rows[0].2 += "; " + ratio(mint, speed.sign, "openssl sign")
                    rows[2].2 += "; " + ratio(verify, speed.verify, "openssl verify")
                    rows[1].2 = ratio(rawSign, speed.sign, "openssl sign")
                    rows[3].2 = ratio(rawVerify, speed.verify, "openssl verify")
                }
                if let masked = try opensslSpeed(seconds: Int(seconds.rounded(.up)), maskIFMA: true) {
                    rows.append(("openssl speed rsa2048 sign, AVX-512 IFMA masked", masked.sign, ""))
                    rows[0].2 += "; " + ratio(mint, masked.sign, "openssl sign without IFMA")
                }
            }
            print("operation".padding(toLength: 52, withPad: " ", startingAt: 0) + "    ops/s     µs/op  ratio")
            for (name, value, note) in rows {
                let line = name.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + String(format: "%9.0f %9.1f  ", value, 1_000_000 / value) + note
                print(line)
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
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl", "speed", "-seconds", String(seconds), "rsa2048"]
            var environment = ProcessInfo.processInfo.environment
            if maskIFMA { environment["OPENSSL_ia32cap"] = ":~0x200000" }
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                print("openssl not found; skipping the openssl reference")
                return nil
            }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self)
            // "rsa 2048 bits 0.000343s 0.000019s   2912.0  51515.0"
            for line in text.split(separator: "\n") where line.hasPrefix("rsa 2048 bits") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                if fields.count >= 7, let sign = Double(fields[5]), let verify = Double(fields[6]) {
                    return (sign, verify)
                }
            }
            print("could not read `openssl speed` output; skipping the openssl reference")
            return nil
        }
    }
}
