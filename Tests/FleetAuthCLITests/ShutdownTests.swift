import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc

    /// Shutdown ends whatever a request is doing: never the crash swift-service-lifecycle ends a group with when its
    /// cancellation takes too long.
    @Suite("fleetauth: shutdown always ends", .temporaryResources, .serialized)
    struct ShutdownTests {
        @Test(
            "SIGTERM while a request waits on a database that does not answer: exit 0, or 1 with one line naming what did not stop",
            .enabled(if: PostgresCluster.binDirectory != nil)
        )
        func stuckRequest() async throws {
            try await PostgresCluster.run { cluster in
                let directory = try await CLI.provisionedDirectory()
                let url = "\(cluster.url)?sslmode=disable"
                let server = try await CLI.detached {
                    try ListeningProcess(
                        ["emulator", "--port", "0", "--grpc-port", "0", "--database", url, "--shutdown-grace", "1"],
                        directory: directory,
                        environment: [:],
                        marker: "Fleet Engine emulator listening on http://127.0.0.1:"
                    )
                }
                let key = try ServiceAccountKey(
                    contentsOf: directory + "/fleet-engine-data/keys/service-super-user.json"
                )
                let token = try FleetEngineTokenMinter(signer: LocalKeySigner(key: key)).mintSynchronously(.server).jwt
                // The database stops answering; a write is sent (on a raw socket, so the test knows it was written).
                try await PostgresCluster.blocking { try cluster.freeze() }
                let body = #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4}"#
                let request =
                    "POST /v1/providers/demo-project/vehicles?vehicleId=stuck HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Bearer \(token)\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                let socket = try Self.connect(port: server.port)
                defer { close(socket) }
                try Self.write(request, to: socket)

                kill(server.process.processIdentifier, SIGTERM)
                let stderr = try await CLI.detached {
                    server.process.waitUntilExit()
                    return String(decoding: server.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                }
                try await PostgresCluster.blocking { try cluster.thaw() }
                #expect(server.process.terminationReason == .exit, "ended by a signal: \(stderr)")
                let status = server.process.terminationStatus
                #expect(status == 0 || status == 1, "\(status): \(stderr)")
                if status == 1 {
                    let lines = stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
                    #expect(lines.count == 1 && lines[0].contains("did not stop"), "\(stderr)")
                }
                #expect(!stderr.contains("Fatal error"), "\(stderr)")
            }
        }

        @Test("SIGTERM: for the drain period /readyz answers 503 naming the shutdown, and requests are still answered")
        func drainPeriod() async throws {
            let directory = try await CLI.provisionedDirectory()
            // A drain far longer than the test: the test ends the process itself once it has seen the drain.
            let server = try await CLI.detached {
                try ListeningProcess(
                    ["emulator", "--in-memory", "--port", "0", "--grpc-port", "0", "--drain-period", "600"],
                    directory: directory,
                    environment: [:],
                    marker: "Fleet Engine emulator listening on http://127.0.0.1:"
                )
            }
            defer {
                kill(server.process.processIdentifier, SIGKILL)
                server.process.waitUntilExit()
            }
            let key = try ServiceAccountKey(contentsOf: directory + "/fleet-engine-data/keys/service-super-user.json")
            let token = try FleetEngineTokenMinter(signer: LocalKeySigner(key: key)).mintSynchronously(.server).jwt
            // A keep-alive connection opened before the signal, as a load balancer's pool holds them.
            let kept = try Self.connect(port: server.port)
            defer { close(kept) }
            let before = try await CLI.detached { try Self.exchange(Self.get("/readyz"), on: kept) }
            #expect(before.hasPrefix("HTTP/1.1 200"), "\(before)")

            kill(server.process.processIdentifier, SIGTERM)
            var readyz = ""
            try await Waiting.until("/readyz answering 503 after SIGTERM") {
                readyz = try await CLI.detached {
                    let socket = try Self.connect(port: server.port)
                    defer { close(socket) }
                    return try Self.exchange(Self.get("/readyz"), on: socket)
                }
                return readyz.hasPrefix("HTTP/1.1 503")
            }
            #expect(readyz.contains(#""shutdown":{"#) && readyz.contains("shutting down"), "\(readyz)")
            // Still answering: a write on the connection opened before the signal, and a read on a new one.
            let body =
                #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#
            let create =
                "POST /v1/providers/demo-project/vehicles?vehicleId=draining HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Bearer \(token)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let created = try await CLI.detached { try Self.exchange(create, on: kept) }
            #expect(created.hasPrefix("HTTP/1.1 200"), "\(created)")
            let read = try await CLI.detached {
                let socket = try Self.connect(port: server.port)
                defer { close(socket) }
                return try Self.exchange(
                    Self.get("/v1/providers/demo-project/vehicles/draining", token: token),
                    on: socket
                )
            }
            #expect(read.hasPrefix("HTTP/1.1 200") && read.contains("OFFLINE"), "\(read)")
            #expect(server.process.isRunning)
        }

        @Test("SIGTERM: the token server drains too: /readyz 503 naming the shutdown, an open connection still served")
        func tokenServerDrain() async throws {
            let directory = try CLI.temporaryDirectory()
            try await CLI.provisionTokenServerData(at: directory + "/data")
            let server = try await CLI.detached {
                try ListeningProcess(
                    ["token-server", "--data", directory + "/data", "--port", "0", "--drain-period", "600"],
                    directory: directory,
                    environment: [:],
                    marker: "Token server listening on http://127.0.0.1:"
                )
            }
            defer {
                kill(server.process.processIdentifier, SIGKILL)
                server.process.waitUntilExit()
            }
            let kept = try Self.connect(port: server.port)
            defer { close(kept) }
            let before = try await CLI.detached { try Self.exchange(Self.get("/readyz"), on: kept) }
            #expect(before.hasPrefix("HTTP/1.1 200"), "\(before)")

            kill(server.process.processIdentifier, SIGTERM)
            var readyz = ""
            try await Waiting.until("/readyz answering 503 after SIGTERM") {
                readyz = try await CLI.detached { try Self.exchange(Self.get("/readyz"), on: kept) }
                return readyz.hasPrefix("HTTP/1.1 503")
            }
            #expect(readyz.contains(#""shutdown":{"#) && readyz.contains("shutting down"), "\(readyz)")
            // A login attempt is answered (refused: no such user), on the connection opened before the signal.
            let body = #"{"username":"nobody","password":"wrong"}"#
            let login = try await CLI.detached {
                try Self.exchange(
                    "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)",
                    on: kept
                )
            }
            #expect(login.hasPrefix("HTTP/1.1 401"), "\(login)")
            #expect(server.process.isRunning)
        }

        static func get(_ path: String, token: String? = nil) -> String {
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (token.map { "Authorization: Bearer \($0)\r\n" } ?? "")
                + "\r\n"
        }

        /// Writes `request` and reads one whole answer (its head and `Content-Length` bytes of body).
        static func exchange(_ request: String, on socket: Int32) throws -> String {
            try write(request, to: socket)
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let text = String(decoding: received, as: UTF8.self)
                if let end = text.range(of: "\r\n\r\n") {
                    let length =
                        text[..<end.lowerBound].lowercased().split(separator: "\r\n")
                        .first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                        ?? 0
                    if text[end.upperBound...].utf8.count >= length { return text }
                }
                let count = buffer.withUnsafeMutableBytes { Glibc.read(socket, $0.baseAddress, $0.count) }
                guard count > 0 else { throw CLIError("the connection ended before a whole answer: \(text)") }
                received += buffer[..<count]
            }
        }

        static func connect(port: Int) throws -> Int32 {
            #if canImport(Glibc)
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
                let fd = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard fd >= 0, connected else { throw CLIError("cannot connect to 127.0.0.1:\(port)") }
            // A read that gets nothing for the hang limit fails rather than blocks the test forever.
            var limit = timeval(tv_sec: Int(Waiting.hangLimit.components.seconds), tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            return fd
        }

        static func write(_ text: String, to socket: Int32) throws {
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let written = bytes[sent...].withUnsafeBytes { Glibc.write(socket, $0.baseAddress, $0.count) }
                guard written > 0 else { throw CLIError("cannot write the request") }
                sent += written
            }
        }
    }
#endif
