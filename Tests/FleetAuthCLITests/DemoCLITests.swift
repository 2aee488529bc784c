import FleetAuthServerTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("fleetauth demo and serve", .temporaryResources, .serialized)
struct DemoCLITests {
    @Test("demo runs the whole chain, prints the table and passes every check; --data keeps the state")
    func demo() async throws {
        let data = try CLI.temporaryDirectory() + "/demo"
        let result = try await CLI.run([
            "demo", "--drivers", "2", "--consumers", "3", "--duration", "12", "--speed", "60", "--data", data,
        ])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("All 15 checks passed."), "\(result.stdout)")
        for row in [
            "driver     vehicle vehicle-2", "consumer   trip trip-3", "dispatcher server", "courier", "recipient",
            "tracking parcel-4", "total",
        ] {
            #expect(result.stdout.contains(row), "missing row \(row)")
        }
        #expect(!result.stdout.contains("✘"))
        for check in [
            "every delivery task ended CLOSED with its outcome (4/4)",
            "a courier's (untrusted) token cannot change its van's stops (403)",
            "a recipient's token shows its own parcel only",
        ] {
            #expect(result.stdout.contains("✔ " + check), "missing check \(check)")
        }
        for file in ["token-server.sqlite", "fleet-engine.sqlite", "emulator-trust.json", "keys"] {
            #expect(FileManager.default.fileExists(atPath: data + "/" + file), "\(file)")
        }
    }

    @Test("demo exits 1 and names the failed check when trips cannot finish in time")
    func demoFailure() async throws {
        let result = try await CLI.run([
            "demo", "--drivers", "1", "--consumers", "1", "--duration", "5", "--speed", "1", "--shipments", "0",
        ])
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("✘ every consumer followed its trip to COMPLETE (0/1)"), "\(result.stdout)")
        #expect(result.stdout.contains("FAILED"))
    }

    @Test("Ctrl-C stops the demo while its apps run, even when the shell started it with SIGINT ignored")
    func demoInterrupted() async throws {
        let process = Process()
        let output = Pipe()
        // A background job of a non-interactive shell inherits SIGINT as "ignored"; the demo must trap it anyway.
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", #"trap '' INT; exec "$0" demo --shipments 0"#, CLI.executable.path]
        process.environment = CLI.environment([:])
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = try await CLI.detached {
            var text = ""
            let guardLimit = ContinuousClock.now + Waiting.hangLimit
            while ContinuousClock.now < guardLimit, !text.contains("Provisioned") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        guard text.contains("Provisioned") else {
            process.terminate()
            Issue.record("the demo never provisioned its fleet: \(text)")
            return
        }
        kill(process.processIdentifier, SIGINT)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        try await Waiting.until("the demo ending after SIGINT") { !process.isRunning }
        let rest = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(text)\(rest)")
        #expect(rest.contains("Interrupted before the checks finished."), "\(rest)")
        let data = try #require(
            text.split(separator: "\n").first { $0.hasPrefix("Data: ") }?.dropFirst(6).split(separator: " ").first
        )
        #expect(!FileManager.default.fileExists(atPath: String(data)), "the demo left \(data) behind")
    }

    @Test("demo refuses bad options with a message")
    func demoOptions() async throws {
        let result = try await CLI.run(["demo", "--drivers", "0"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--drivers must be between 1 and 200."), "\(result.stderr)")
    }

    @Test("serve runs both servers until SIGINT and keeps its state for the next start")
    func serve() async throws {
        let data = try CLI.temporaryDirectory() + "/serve"
        for start in 1...2 {
            let process = Process()
            let output = Pipe()
            process.executableURL = CLI.executable
            process.arguments = [
                "serve", "--data", data, "--emulator-port", "0", "--emulator-grpc-port", "0", "--token-server-port",
                "0",
            ]
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let text = try await CLI.detached {
                var text = ""
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline, !text.contains("Press Ctrl-C") {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                return text
            }
            #expect(text.contains("Created operator account") == (start == 1), "\(text)")
            func url(after label: String) -> URL? {
                guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(label) }),
                    let word = line.split(separator: " ").first(where: { $0.hasPrefix("http://") })
                else { return nil }
                return URL(string: String(word))
            }
            let emulator = try #require(url(after: "Fleet Engine emulator:"), "\(text)")
            let tokenServer = try #require(url(after: "Token server:"), "\(text)")
            #expect(try await CLI.detached { try Self.status(emulator.appendingPathComponent("metrics")) } == 200)
            #expect(try await CLI.detached { try Self.status(tokenServer.appendingPathComponent("healthz")) } == 200)
            #expect(
                try await CLI.detached { try Self.status(tokenServer.appendingPathComponent("token/server")) } == 401
            )
            if start == 1 {
                let answers = try await Self.pasteFirstSteps(from: text, in: data)
                try Self.expectREADMEFirstRequest(printed: text, answers: answers, data: data)
            }
            kill(process.processIdentifier, SIGINT)
            try await CLI.detached { process.waitUntilExit() }
            #expect(process.terminationStatus == 0)
        }
    }

    /// Runs, in bash, the lines `serve` printed to paste next, as a newcomer would: the printed `export PATH` alone
    /// puts `fleetauth` on the PATH; the operator creates v1, dana is added and granted it, her driver token updates
    /// v1 and is refused for v2. Returns what the commands wrote.
    static func pasteFirstSteps(from text: String, in directory: String) async throws -> String {
        let script = "set -euo pipefail\n" + (try firstSteps(in: text)).joined(separator: "\n") + "\n"
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let result = try await CLI.run(
            ["-c", script],
            in: directory,
            environment: ["PATH": path],
            timeout: 120,
            program: URL(fileURLWithPath: "/bin/bash")
        )
        #expect(result.status == 0, "\(script)\n\(result.stdout)\n\(result.stderr)")
        // Three answers: the vehicle created and v1 updated (both name v1), then Google's error body for v2 alone;
        // then the request log's line for the refusal.
        #expect(result.stdout.contains("providers/demo-project/vehicles/v1"), "\(result.stdout)")
        #expect(result.stdout.contains("37.422"), "\(result.stdout)")
        #expect(result.stdout.components(separatedBy: "\"error\"").count == 2, "\(result.stdout)")
        #expect(result.stdout.contains("PERMISSION_DENIED"), "\(result.stdout)")
        return result.stdout
    }

    /// The lines `serve` printed after "Next, in another shell:", up to the blank line.
    static func firstSteps(in text: String) throws -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Next, in another shell") }, "\(text)")
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }

    /// The README's first request is what `serve` prints, with the operator's password, the addresses and the paths
    /// in the README's placeholders; and the answer it shows is the last one the emulator gave.
    static func expectREADMEFirstRequest(printed text: String, answers: String, data: String) throws {
        let readmeURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let readme = try String(contentsOf: readmeURL, encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## A first request, end to end").dropFirst().first)
        /// The fenced blocks of `language` in `text`, in order.
        func blocks(_ language: String, in text: String) -> [String] {
            text.components(separatedBy: "```\(language)\n").dropFirst().compactMap {
                $0.components(separatedBy: "\n```").first
            }
        }
        let pasted = try #require(blocks("sh", in: section).first { $0.contains("OPERATOR=") })
        let commands = pasted.replacingOccurrences(of: " \\\n    ", with: " ").split(separator: "\n").map(String.init)

        var printed = try firstSteps(in: text).joined(separator: "\n")
        let password = try #require(text.firstMatch(of: /with password (\S+) \(shown once\)/)?.1)
        let binaries = try #require(printed.firstMatch(of: /export PATH="(.+):\$PATH"/)?.1)
        let tokenServer = try #require(text.firstMatch(of: /Token server: +http:\/\/(\S+)/)?.1)
        let emulator = try #require(text.firstMatch(of: /Fleet Engine emulator: +http:\/\/(\S+)/)?.1)
        for (value, placeholder) in [
            (String(password), "OPERATOR_PASSWORD"), (String(binaries), "$HOME/FleetAuth/.build/debug"),
            (data, "~/FleetAuth/fleetauth-data"), (String(tokenServer), "127.0.0.1:8788"),
            (String(emulator), "127.0.0.1:8787"),
        ] {
            printed = printed.replacingOccurrences(of: value, with: placeholder)
        }
        #expect(commands == printed.split(separator: "\n").map(String.init), "README:\n\(commands)\nserve:\n\(printed)")
        let lines = answers.split(separator: "\n").map(String.init)
        // The refusal's error body, then the request log's line that explains it (its time aside).
        #expect(lines.first { $0.contains(#""error""#) } == blocks("json", in: section).first, "\(answers)")
        let explained = lines.last.map { $0.replacing(/^\S+/, with: "TIME") }
        #expect(explained == blocks("text", in: section).first, "\(answers)")
    }

    /// The HTTP status of a GET, waited for on a plain thread (the test is synchronous).
    static func status(_ url: URL) throws -> Int {
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var status = 0
        URLSession.shared.dataTask(with: url) { _, response, _ in
            status = (response as? HTTPURLResponse)?.statusCode ?? 0
            semaphore.signal()
        }.resume()
        semaphore.wait()
        return status
    }
}
