import Foundation

/// Load from well-known generators in processes of their own — wrk for HTTP/1.1, h2load for HTTP/2 and gRPC —
/// so that the server, not a generator sharing its process, is what is measured.
enum ExternalLoad {
    /// What one run of a generator measured.
    struct Result: Sendable {
        var rate: Double
        /// Milliseconds.
        var p50: Double
        var p99: Double
        var requests: Int
        /// Responses that were not 2xx (for gRPC: HTTP statuses only; gRPC statuses are checked by the caller).
        var failures: Int
    }

    /// The path of `tool` on `PATH`, if it is installed.
    static func find(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// One request wrk sends: a path and its headers (the method and body are the run's).
    struct Target: Sendable {
        var path: String
        var headers: [(String, String)]
    }

    /// wrk with one thread: `connections` keep-alive HTTP/1.1 connections to `base`, sending `method` with `body`
    /// to each of `targets` in turn.
    static func wrk(
        base: String,
        method: String,
        targets: [Target],
        body: String,
        connections: Int,
        seconds: Double,
        directory: String
    ) async throws -> Result {
        var script = "wrk.method = \(lua(method))\nwrk.body = \(lua(body))\n"
        if targets.count == 1 {
            for (name, value) in targets[0].headers { script += "wrk.headers[\(lua(name))] = \(lua(value))\n" }
        } else {
            script += "local targets = {\n"
            for target in targets {
                script += "  {\(lua(target.path)), {"
                script += target.headers.map { "[\(lua($0.0))] = \(lua($0.1))" }.joined(separator: ", ")
                script += "}},\n"
            }
            script += """
                }
                local next = 0
                request = function()
                  next = next % #targets + 1
                  return wrk.format(nil, targets[next][1], targets[next][2], nil)
                end

                """
        }
        let scriptPath = directory + "/wrk-\(UUID().uuidString).lua"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: scriptPath) }
        let (status, output) = try await runOffThePool([
            "wrk", "-t1", "-c\(connections)", "-d\(max(1, Int(seconds.rounded())))s", "--latency", "-s", scriptPath,
            base + targets[0].path,
        ])
        guard status == 0, let parsed = parseWrk(output) else {
            throw BenchmarkFailure("wrk exited with status \(status): \(output)")
        }
        return parsed
    }

    /// h2load with one thread: `clients` HTTP/2 connections, each with `streams` requests in flight, POSTing
    /// the file `body` to `url` with `headers` (or HTTP/1.1 with `http1`).
    static func h2load(
        url: String,
        headers: [(String, String)],
        bodyFile: String,
        clients: Int,
        streams: Int,
        seconds: Double,
        directory: String
    ) async throws -> Result {
        let log = directory + "/h2load-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        var arguments = [
            "h2load", "-t1", "-c\(clients)", "-m\(streams)", "-D\(max(1, Int(seconds.rounded())))",
            "--warm-up-time=500ms", "-d", bodyFile,
            "--log-file=\(log)",
        ]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        arguments.append(url)
        let (status, output) = try await runOffThePool(arguments)
        guard status == 0, let rate = firstNumber(after: "finished in", in: output, field: 1) else {
            throw BenchmarkFailure("h2load exited with status \(status): \(output)")
        }
        // The log has a line per request measured: start (µs), HTTP status, duration (µs).
        var durations: [Double] = []
        var failures = 0
        for line in (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n") ?? [] {
            let columns = line.split(separator: "\t")
            guard columns.count >= 3, let code = Int(columns[1]), let micros = Double(columns[2]) else { continue }
            if !(200..<300).contains(code) { failures += 1 }
            durations.append(micros / 1000)
        }
        durations.sort()
        func percentile(_ fraction: Double) -> Double {
            guard !durations.isEmpty else { return 0 }
            return durations[
                min(durations.count - 1, max(0, Int((Double(durations.count) * fraction).rounded(.up)) - 1))
            ]
        }
        return Result(
            rate: rate,
            p50: percentile(0.5),
            p99: percentile(0.99),
            requests: durations.count,
            failures: failures
        )
    }

    /// A gRPC message as it travels in an HTTP/2 body: uncompressed flag, big-endian length, the bytes.
    static func grpcFrame(_ message: [UInt8]) -> [UInt8] {
        let length = UInt32(message.count)
        return [
            0, UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
            UInt8(truncatingIfNeeded: length),
        ] + message
    }

    /// Reads wrk's report: `Requests/sec:`, the latency distribution and `Non-2xx or 3xx responses:`.
    static func parseWrk(_ output: String) -> Result? {
        guard let rate = firstNumber(after: "Requests/sec:", in: output, field: 0),
            let requests = firstNumber(after: "", in: output, field: 0, line: { $0.contains("requests in") })
        else { return nil }
        func latency(_ label: String) -> Double {
            for line in output.split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count == 2, fields[0] == label else { continue }
                return milliseconds(String(fields[1])) ?? 0
            }
            return 0
        }
        let failures = firstNumber(after: "Non-2xx or 3xx responses:", in: output, field: 0) ?? 0
        return Result(
            rate: rate,
            p50: latency("50%"),
            p99: latency("99%"),
            requests: Int(requests),
            failures: Int(failures)
        )
    }

    /// wrk's durations (`812.00us`, `3.05ms`, `1.20s`) in milliseconds.
    static func milliseconds(_ text: String) -> Double? {
        for (suffix, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0), ("m", 60_000.0)] where text.hasSuffix(suffix)
        {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }
        }
        return nil
    }

    /// The `field`-th number on the first line holding `marker` (or passing `line`), after the marker.
    private static func firstNumber(
        after marker: String,
        in output: String,
        field: Int,
        line matches: ((Substring) -> Bool)? = nil
    ) -> Double? {
        for line in output.split(separator: "\n") where matches?(line) ?? line.contains(marker) {
            let rest = marker.isEmpty ? line[...] : line[line.range(of: marker)!.upperBound...]
            let numbers = rest.split(whereSeparator: { !($0.isNumber || $0 == ".") }).compactMap { Double($0) }
            return field < numbers.count ? numbers[field] : nil
        }
        return nil
    }

    private static func lua(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Runs a program on a thread of its own, so the servers measured in this process keep both cooperative
    /// threads while it runs.
    private static func runOffThePool(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let environment = ProcessInfo.processInfo.environment
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result { try runCapturingOutput(arguments, environment: environment) })
            }.start()
        }
    }
}
