import Foundation
import NIOConcurrencyHelpers

/// SoftHSM2 tokens for tests of the PKCS#11 signer: each in a temporary directory with its own `softhsm2.conf`.
///
/// SoftHSM reads `SOFTHSM2_CONF` once, when the module is initialized, and misbehaves when several processes open
/// one token at once. So the test process uses one token for all its tests (``shared``, whose configuration it
/// sets in its own environment before any test loads the module), with an object label per test; a test that
/// starts `fleetauth` processes makes a token of their own (``makeToken(label:)``) and hands them its
/// ``Token/environment``.
public enum SoftHSM {
    /// The SoftHSM2 module, where Debian, Homebrew or a source build put it; nil when it is not installed.
    public static let modulePath: String? = [
        "/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
        "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so", "/opt/homebrew/lib/softhsm/libsofthsm2.so",
        "/usr/local/lib/softhsm/libsofthsm2.so",
    ].first { FileManager.default.fileExists(atPath: $0) }

    /// `softhsm2-util`, if installed.
    public static let utility: String? = executable("softhsm2-util")
    /// OpenSC's `pkcs11-tool`, if installed.
    public static let pkcs11Tool: String? = executable("pkcs11-tool")

    /// `openssl`, if installed.
    public static let openssl: String? = executable("openssl")

    /// Whether SoftHSM2 can be used here.
    public static var isAvailable: Bool { modulePath != nil && utility != nil }

    /// Whether the tests must run (CI sets `FLEETAUTH_REQUIRE_SOFTHSM=1` after installing it): then a missing
    /// SoftHSM fails them instead of skipping them.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["FLEETAUTH_REQUIRE_SOFTHSM"] == "1" }

    /// Why the tests are skipped.
    public static let skipReason = "SoftHSM2 is not installed (apt-get install softhsm2 opensc)"

    /// One initialized token.
    public struct Token: Sendable {
        /// The token's label.
        public let label: String
        /// The user PIN.
        public let pin: String
        /// The directory holding the configuration and the token.
        public let directory: String
        /// The module's path.
        public let modulePath: String

        /// `SOFTHSM2_CONF` for processes that use this token.
        public var environment: [String: String] { ["SOFTHSM2_CONF": directory + "/softhsm2.conf"] }

        /// The PKCS#11 URI of `object` in this token (or the token labelled `token` beside it), with the module and
        /// the PIN.
        public func uri(object: String, pin: String? = nil, token: String? = nil) -> String {
            "pkcs11:token=\(token ?? label);object=\(object)?module-path=\(modulePath)&pin-value=\(pin ?? self.pin)"
        }

        /// Runs `pkcs11-tool` on this token (logged in); throws with its output when it fails.
        public func pkcs11Tool(_ arguments: [String]) throws {
            guard let tool = SoftHSM.pkcs11Tool else { throw SoftHSMError("pkcs11-tool (opensc) is not installed") }
            try SoftHSM.run(
                tool,
                ["--module", modulePath, "--token-label", label, "--login", "--pin", pin] + arguments,
                environment: environment
            )
        }
    }

    /// The test process's token, made (and `SOFTHSM2_CONF` set for this process) on first use, with two keys no
    /// signer may use: `ec-key` (P-256) and `rsa1024-key` (RSA-1024), when `pkcs11-tool` is installed. Beside it, in
    /// the same configuration, a token labelled ``pinCheckLabel`` that no test logs in to successfully (a PKCS#11
    /// login holds for the whole process, so a wrong PIN is noticed only on a token not logged in yet).
    public static let shared: Result<Token, SoftHSMError> = {
        do {
            let token = try makeToken(label: "fleetauth-tests")
            try run(
                utility!,
                ["--init-token", "--free", "--label", pinCheckLabel, "--pin", "1234", "--so-pin", "5678"],
                environment: token.environment
            )
            setenv("SOFTHSM2_CONF", token.environment["SOFTHSM2_CONF"]!, 1)
            if pkcs11Tool != nil {
                try token.pkcs11Tool(["--keypairgen", "--key-type", "EC:prime256v1", "--label", "ec-key", "--id", "e1"])
                try token.pkcs11Tool(["--keypairgen", "--key-type", "rsa:1024", "--label", "rsa1024-key", "--id", "a1"])
            }
            return .success(token)
        } catch let error as SoftHSMError {
            return .failure(error)
        } catch {
            return .failure(SoftHSMError("\(error)"))
        }
    }()

    /// ``shared``, made on a thread of its own the first time (it runs `softhsm2-util` and `pkcs11-tool`), so the
    /// wait never holds one of the threads every concurrent test shares.
    public static func sharedToken() async throws -> Token {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: shared.mapError { $0 as any Error }) }.start()
        }
    }

    /// The label of the token beside ``shared`` that nobody logs in to.
    public static let pinCheckLabel = "fleetauth-pin-check"

    /// A new token in a new temporary directory, removed when the process exits.
    public static func makeToken(label: String, pin: String = "1234") throws -> Token {
        guard let modulePath, let utility else { throw SoftHSMError("SoftHSM2 is not installed") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fleetauth-softhsm-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory + "/tokens", withIntermediateDirectories: true)
        try Data("directories.tokendir = \(directory)/tokens\nobjectstore.backend = file\nlog.level = ERROR\n".utf8)
            .write(to: URL(fileURLWithPath: directory + "/softhsm2.conf"))
        removeAtExit(directory)
        let token = Token(label: label, pin: pin, directory: directory, modulePath: modulePath)
        try run(
            utility,
            ["--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", "5678"],
            environment: token.environment
        )
        return token
    }

    /// The directories ``makeToken(label:pin:)`` made: tokens live as long as the process that uses them (a
    /// PKCS#11 module keeps its files open), so they are removed when it exits.
    private static let madeDirectories = NIOLockedValueBox<[String]>([])

    private static func removeAtExit(_ directory: String) {
        let first = madeDirectories.withLockedValue { directories in
            directories.append(directory)
            return directories.count == 1
        }
        guard first else { return }
        atexit {
            for directory in SoftHSM.madeDirectories.withLockedValue({ $0 }) {
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }

    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SoftHSMError("\(executable) \(arguments.first ?? "") failed: \(text.prefix(400))")
        }
    }

    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map { "\($0)/\(name)" } + ["/usr/bin/\(name)"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// SoftHSM could not be set up; the message says why.
public struct SoftHSMError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
