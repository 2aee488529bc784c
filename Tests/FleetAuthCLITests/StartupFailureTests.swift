import FleetAuthCore
import FleetAuthServerTesting
import FleetTokenServer
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback TCP port another process holds: a socket bound and listening until `close()`.
final class OccupiedPort: @unchecked Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 1) == 0 else { throw CLIError("cannot hold a loopback port") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

/// An operator's mistakes at start: each gives one line naming what, where and the option that changes it, exit
/// status 1, and no "listening" line (the other listeners are closed with the process).
@Suite("Startup failures", .temporaryResources, .serialized)
struct StartupFailureTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let arguments: @Sendable (_ busy: Int, _ directory: String) -> [String]
        let message: @Sendable (_ busy: Int, _ directory: String) -> String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "emulator REST port in use",
            arguments: { busy, _ in ["emulator", "--port", "\(busy)", "--grpc-port", "0", "--in-memory"] },
            message: { busy, _ in
                "Cannot listen on 127.0.0.1:\(busy) (the REST port): address already in use. Choose another address or port with --host/--port."
            }
        ),
        Case(
            name: "emulator gRPC port in use",
            arguments: { busy, _ in ["emulator", "--port", "0", "--grpc-port", "\(busy)", "--in-memory"] },
            message: { busy, _ in
                "Cannot listen on 127.0.0.1:\(busy) (the gRPC port): address already in use. Choose another address or port with --host/--grpc-port."
            }
        ),
        Case(
            name: "emulator metrics port in use",
            arguments: { busy, _ in
                ["emulator", "--port", "0", "--grpc-port", "0", "--metrics-port", "\(busy)", "--in-memory"]
            },
            message: { busy, _ in
                "Cannot listen on 127.0.0.1:\(busy) (the metrics port): address already in use. Choose another address or port with --metrics-host/--metrics-port."
            }
        ),
        Case(
            name: "emulator address that is not this machine's",
            arguments: { _, _ in ["emulator", "--host", "192.0.2.1", "--port", "0", "--grpc-port", "0", "--in-memory"]
            },
            message: { _, _ in "Cannot listen on 192.0.2.1:0 (the " }
        ),
        Case(
            name: "token server port in use",
            arguments: { busy, _ in ["token-server", "--port", "\(busy)", "--bcrypt-cost", "10"] },
            message: { busy, _ in
                "Cannot listen on 127.0.0.1:\(busy) (the token server's port): address already in use. Choose another address or port with --host/--port."
            }
        ),
        Case(
            name: "serve: the emulator's REST port in use",
            arguments: { busy, _ in
                ["serve", "--emulator-port", "\(busy)", "--emulator-grpc-port", "0", "--token-server-port", "0"]
            },
            message: { busy, _ in
                "Cannot listen on 127.0.0.1:\(busy) (the emulator's REST port): address already in use. Choose another address or port with --host/--emulator-port."
            }
        ),
        Case(
            name: "serve: the emulator's gRPC port in use",
            arguments: { busy, _ in
                ["serve", "--emulator-port", "0", "--emulator-grpc-port", "\(busy)", "--token-server-port", "0"]
            },
            message: { busy, _ in
                "Cannot listen on 127.0.0.1:\(busy) (the emulator's gRPC port): address already in use. Choose another address or port with --host/--emulator-grpc-port."
            }
        ),
        Case(
            name: "serve: the token server's port in use",
            arguments: { busy, _ in
                ["serve", "--emulator-port", "0", "--emulator-grpc-port", "0", "--token-server-port", "\(busy)"]
            },
            message: { busy, _ in
                "Cannot listen on 127.0.0.1:\(busy) (the token server's port): address already in use. Choose another address or port with --host/--token-server-port."
            }
        ),
        Case(
            name: "emulator data directory under a file",
            arguments: { _, directory in
                ["emulator", "--port", "0", "--grpc-port", "0", "--data", "\(directory)/file/data"]
            },
            message: { _, directory in
                "Cannot create the data directory \(directory)/file/data: \(directory)/file is not a directory. Choose another with --data."
            }
        ),
        Case(
            name: "token server data directory under a file",
            arguments: { _, directory in ["token-server", "--port", "0", "--data", "\(directory)/file/data"] },
            message: { _, directory in
                "Cannot create the data directory \(directory)/file/data: \(directory)/file is not a directory. Choose another with --data."
            }
        ),
        Case(
            name: "emulator trust file missing",
            arguments: { _, directory in ["emulator", "--port", "0", "--trust", "\(directory)/missing.json"] },
            message: { _, directory in "\(directory)/missing.json: no such trust file, or it cannot be read" }
        ),
        Case(
            name: "token server key file missing",
            arguments: { _, directory in
                ["token-server", "--port", "0", "--driver-key", "\(directory)/missing.json", "--bcrypt-cost", "10"]
            },
            message: { _, directory in "\(directory)/missing.json: no such key file" }
        ),
        Case(
            name: "emulator database that refuses",
            // Port 1: nothing listens there, so the connection is refused at once.
            arguments: { _, _ in ["emulator", "--port", "0", "--database", "postgres://fleet:x@127.0.0.1:1/fleet"] },
            message: { _, _ in "Cannot use PostgreSQL at 127.0.0.1:1/fleet as fleet: " }
        ),
    ]

    @Test("one line, exit status 1, nothing listening", arguments: cases)
    func fails(_ failure: Case) async throws {
        let directory = try await CLI.provisionedDirectory()
        _ = FileManager.default.createFile(atPath: directory + "/file", contents: Data("not a directory".utf8))
        // The token servers' default data directories, as a first start leaves them: these failures are not about it.
        switch failure.arguments(0, directory).first {
        case "token-server": try await CLI.provisionTokenServerData(at: directory + "/fleetauth-data")
        case "serve": try await CLI.provisionTokenServerData(at: directory + "/fleetauth-data")
        default: break
        }
        let holder = try OccupiedPort()
        let busy = holder.port
        let output = try await CLI.run(failure.arguments(busy, directory), in: directory, timeout: 120)
        withExtendedLifetime(holder) {}
        #expect(output.status == 1, "\(output.stdout)\n\(output.stderr)")
        let lines = output.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(output.stderr)")
        let expected = "Error: " + failure.message(busy, directory)
        #expect(lines.first?.hasPrefix(expected) == true, "\(lines.first ?? "") does not start with \(expected)")
        #expect(!output.stdout.contains("listening"), "\(output.stdout)")
    }
}

/// Every server option from an environment variable (the option wins), and `--log-format json`, as a container
/// platform runs the servers.
@Suite("Configuration from the environment; JSON logs", .temporaryResources, .serialized)
struct EnvironmentConfigurationTests {
    @Test(
        "--help names a variable for every option of each server command",
        arguments: ["emulator", "token-server", "serve"]
    )
    func helpNamesEveryVariable(_ command: String) async throws {
        let help = try await CLI.run([command, "--help"])
        #expect(help.status == 0)
        let text = help.stdout.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "  ", with: " ")
        let options = Set(
            help.stdout.split(separator: "\n").compactMap { line -> String? in
                let trimmed = line.drop { $0 == " " }
                guard trimmed.hasPrefix("--") else { return nil }
                return String(trimmed.dropFirst(2).prefix { $0.isLetter || $0.isNumber || $0 == "-" })
            }
        ).subtracting(["help"])
        #expect(options.count > 5)
        for option in options {
            let variable = "FLEETAUTH_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
            #expect(text.contains(variable), "\(command) --help does not name \(variable)")
        }
    }

    @Test("a variable sets its option; the option on the command line wins")
    func variableAndOptionWins() async throws {
        let directory = try await CLI.provisionedDirectory()
        let first = try OccupiedPort(), second = try OccupiedPort()
        let fromEnvironment = try await CLI.run(
            ["emulator", "--port", "0"],
            in: directory,
            environment: ["FLEETAUTH_GRPC_PORT": "\(first.port)", "FLEETAUTH_IN_MEMORY": "true"],
            timeout: 60
        )
        #expect(fromEnvironment.status == 1)
        #expect(fromEnvironment.stderr.contains("127.0.0.1:\(first.port) (the gRPC port)"), "\(fromEnvironment.stderr)")
        // In memory: no data directory was made.
        #expect(!FileManager.default.fileExists(atPath: directory + "/fleet-engine-data/fleet-engine.sqlite"))
        let optionWins = try await CLI.run(
            ["emulator", "--port", "0", "--grpc-port", "\(second.port)", "--in-memory"],
            in: directory,
            environment: ["FLEETAUTH_GRPC_PORT": "\(first.port)"],
            timeout: 60
        )
        #expect(optionWins.stderr.contains("127.0.0.1:\(second.port) (the gRPC port)"), "\(optionWins.stderr)")
        let bad = try await CLI.run(["emulator"], in: directory, environment: ["FLEETAUTH_IN_MEMORY": "maybe"])
        #expect(bad.status == 1)
        #expect(bad.stderr == "Error: FLEETAUTH_IN_MEMORY must be 1, true, 0 or false, not maybe.\n")
        let invalid = try await CLI.run(["emulator"], in: directory, environment: ["FLEETAUTH_IDLE_TIMEOUT": "-1"])
        #expect(invalid.status != 0)
        #expect(invalid.stderr.contains("--idle-timeout must be positive."), "\(invalid.stderr)")
        // The shutdown and database timeouts, from options and from variables, for both servers.
        for (command, arguments, environment, message) in [
            ("emulator", ["--drain-period=-1"], [:], "--drain-period must be 0 or more seconds."),
            ("token-server", [], ["FLEETAUTH_DRAIN_PERIOD": "nan"], "--drain-period must be 0 or more seconds."),
            ("emulator", [], ["FLEETAUTH_DATABASE_TIMEOUT": "0"], "--database-timeout must be more than 0 seconds."),
            ("token-server", ["--database-down-timeout=-2"], [:], "--database-down-timeout must be more than 0"),
        ] {
            let refused = try await CLI.run([command] + arguments, in: directory, environment: environment)
            #expect(refused.status != 0, "\(command) \(arguments) \(environment)")
            #expect(refused.stderr.contains(message), "\(refused.stderr)")
        }
        withExtendedLifetime((first, second)) {}
    }

    @Test("a non-loopback address without TLS is warned about once listening; loopback is quiet")
    func plaintextWarning() async throws {
        let directory = try await CLI.provisionedDirectory()
        for (host, warned) in [("0.0.0.0", true), ("127.0.0.1", false)] {
            let process = Process()
            process.executableURL = CLI.executable
            process.arguments = ["emulator", "--host", host, "--port", "0", "--grpc-port", "0", "--in-memory"]
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // The warning comes once every listener is bound, just before the "listening" lines.
            _ = try await CLI.detached {
                try ListeningProcess.port(of: process, output: output, marker: "gRPC listening on \(host):")
            }
            process.terminate()
            let stderr = try await CLI.detached {
                let data = errors.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                return String(decoding: data, as: UTF8.self)
            }
            #expect(stderr.contains("Warning: The emulator listens on \(host) without TLS") == warned, "\(stderr)")
        }
    }

    @Test("--log-format json: every line of the process is one JSON object with Cloud Logging's fields")
    func jsonLines() async throws {
        let directory = try await CLI.provisionedDirectory()
        let busy = try OccupiedPort()
        // The announcements of a provisioning start, then a failure: all JSON.
        let output = try await CLI.run(
            ["emulator", "--port", "0", "--grpc-port", "\(busy.port)", "--log-format", "json"],
            in: directory,
            timeout: 60
        )
        #expect(output.status == 1)
        let out = output.stdout.split(separator: "\n"), err = output.stderr.split(separator: "\n")
        #expect(out.count > 5)
        #expect(err.count == 1)
        for line in out + err {
            let object = try StrictJSONParser().parseObject(Array(line.utf8))
            #expect(object["severity"]?.stringValue != nil, "\(line)")
            #expect(object["message"]?.stringValue != nil, "\(line)")
            #expect(object["time"]?.stringValue.flatMap(RFC3339.parse) != nil, "\(line)")
        }
        let failure = try StrictJSONParser().parseObject(Array(err[0].utf8))
        #expect(failure["severity"] == "ERROR")
        #expect(
            failure["message"]?.stringValue?.hasPrefix("Cannot listen on 127.0.0.1:\(busy.port) (the gRPC port)")
                == true
        )
        withExtendedLifetime(busy) {}
    }
}

@Suite("Token server: --audit-retention", .temporaryResources, .serialized)
struct AuditRetentionCLITests {
    @Test("entries older than --audit-retention are gone once the server has started; newer ones stay")
    func prunedAtStart() async throws {
        let directory = try CLI.temporaryDirectory()
        let data = directory + "/fleetauth-data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let now = Date()
        do {
            let store = try SQLiteTokenServerStore(path: data + "/" + TokenServer.databaseFileName)
            try await store.append(
                contentsOf: [now.addingTimeInterval(-7200), now.addingTimeInterval(-3000), now.addingTimeInterval(-60)]
                    .map {
                        AuditEntry(
                            issuedAt: $0,
                            username: "dana",
                            endpoint: .driver,
                            scope: "{}",
                            kid: "k",
                            expiresAt: $0
                        )
                    }
            )
            await store.close()
        }
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["token-server", "--port", "0", "--bcrypt-cost", "10", "--audit-retention", "1h"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        _ = try ListeningProcess.port(
            of: process,
            output: output,
            marker: "Token server listening on http://127.0.0.1:"
        )
        // Pruning starts with the server; give it a moment to commit.
        let store = try SQLiteTokenServerStore(path: data + "/" + TokenServer.databaseFileName)
        var remaining = try await store.recentEntries(limit: 10)
        try await Waiting.until("the pruning at start committed", every: .milliseconds(50)) {
            remaining = try await store.recentEntries(limit: 10)
            return remaining.count == 2
        }
        #expect(
            remaining.map(\.issuedAt.epochSeconds)
                == [now.addingTimeInterval(-60), now.addingTimeInterval(-3000)].map(\.epochSeconds)
        )
        await store.close()
    }
}
