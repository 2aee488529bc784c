import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Testing

#if canImport(Glibc)
    import Glibc
    private let systemSend = Glibc.send
#elseif canImport(Darwin)
    import Darwin
    private let systemSend = Darwin.send
#endif

/// Requests no well-behaved client sends, over a real socket: rule D2 of the *Verification rules* article (huge headers and
/// bodies) and D4 (slow clients). Each test runs the emulator's own HTTP server on a free loopback port.
@Suite("Request limits and slow clients (live socket)")
struct LimitsTests {
    typealias F = EmulatorFixture

    /// Runs the emulator server with `limits` on a free port for the duration of `body`.
    static func withLiveEmulator(
        limits: ServerLimits = .init(),
        _ body: @Sendable (_ port: Int, _ store: SQLiteFleetStore) async throws -> Void
    ) async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        let server = EmulatorServer(configuration: .init(limits: limits), accounts: F.accounts, store: store)
        var logger = Logger(label: "limits")
        logger.logLevel = .critical
        let ports = AsyncStream.makeStream(of: Int.self)
        let application = server.application(port: 0, logger: logger) { ports.continuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await body(port, store)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    static let vehicle = "/v1/providers/demo-project/vehicles/v1"

    @Test("D2: a 1 MB Authorization header is refused before any token work, and the server keeps serving")
    func hugeHeader() async throws {
        try await Self.withLiveEmulator { port, _ in
            let (status, after) = try await onThread {
                let connection = try RawConnection(port: port)
                let head = "GET \(Self.vehicle) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                connection.send(
                    Array(head.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20) + Array("\r\n\r\n".utf8)
                )
                return (connection.responseStatus(), try RawConnection.get(port: port, path: Self.vehicle))
            }
            #expect(status == 400 || status == 431, "status \(String(describing: status))")
            #expect(after == 401)
        }
    }

    @Test("D2: 10,000 header fields are refused")
    func manyHeaders() async throws {
        try await Self.withLiveEmulator { port, _ in
            let (status, after) = try await onThread {
                let connection = try RawConnection(port: port)
                var request = "GET \(Self.vehicle) HTTP/1.1\r\nHost: x\r\n"
                for index in 0..<10_000 { request += "X-Filler-\(index): y\r\n" }
                connection.send(Array((request + "\r\n").utf8))
                return (connection.responseStatus(), try RawConnection.get(port: port, path: Self.vehicle))
            }
            #expect(status == 400 || status == 431, "status \(String(describing: status))")
            #expect(after == 401)
        }
    }

    @Test("D2: a body over 1 MiB is 413 (declared or streamed) and writes nothing")
    func hugeBody() async throws {
        try await Self.withLiveEmulator { port, store in
            let path = "/v1/providers/demo-project/vehicles?vehicleId=v1"
            let payload = #"{"vehicleState":"ONLINE","padding":""#
            let body = Array(payload.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 2 << 20) + Array(#""}"#.utf8)
            for chunked in [false, true] {
                let (status, failure) = try await onThread {
                    let connection = try RawConnection(port: port)
                    var head = "POST \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(F.server)\r\n"
                    head += "Content-Type: application/json\r\n"
                    if chunked {
                        head += "Transfer-Encoding: chunked\r\n\r\n"
                        let status = connection.sendReadingStatus(
                            Array(head.utf8) + Array((String(body.count, radix: 16) + "\r\n").utf8) + body
                                + Array("\r\n0\r\n\r\n".utf8)
                        )
                        return (status, connection.failure)
                    }
                    let status = connection.sendReadingStatus(
                        Array((head + "Content-Length: \(body.count)\r\n\r\n").utf8) + body
                    )
                    return (status, connection.failure)
                }
                #expect(status == 413, "chunked: \(chunked); \(failure)")
            }
            #expect(try await store.vehicle(provider: "demo-project", id: "v1") == nil)
        }
    }

    @Test("D4: a client that never finishes its request is disconnected after the idle timeout; others are served")
    func slowClient() async throws {
        var limits = ServerLimits()
        // The server closes a connection idle for 5 s; each reader gives up only after 60 s, a guard against a hang
        // twelve times the expected wait: a connection the server closed reads end-of-file, one it left open reads a
        // timeout, whatever the machine's speed.
        limits.idleTimeout = .seconds(5)
        try await Self.withLiveEmulator(limits: limits) { port, _ in
            let (served, ends) = try await onThread {
                let slow = try (0..<50).map { _ in try RawConnection(port: port, receiveTimeout: 60) }
                for connection in slow {
                    connection.send(Array("GET \(Self.vehicle) HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8))
                }
                // Other clients are served while the slow ones hang.
                let served = try RawConnection.get(port: port, path: Self.vehicle, receiveTimeout: 60)
                return (served, slow.map { $0.readUntilClosed() })
            }
            #expect(served == 401)
            #expect(ends.allSatisfy { $0 == .closed }, "\(ends)")
        }
    }

    @Test(
        "D4: a body trickled after its head is cut off at the request timeout, though bytes keep the connection from idling; nothing is written"
    )
    func trickledBody() async throws {
        var limits = ServerLimits()
        // The idle timeout (30 s) never fires while bytes arrive; the request timeout (1 s) does. Readers give up
        // after 60 s, a guard against a hang: a connection the server closed reads end-of-file.
        limits.requestTimeout = .seconds(1)
        try await Self.withLiveEmulator(limits: limits) { port, store in
            let ends = try await onThread {
                let trickling = try (0..<20).map { _ in try RawConnection(port: port, receiveTimeout: 60) }
                for connection in trickling {
                    var head = "POST /v1/providers/demo-project/vehicles?vehicleId=v1 HTTP/1.1\r\nHost: x\r\n"
                    head += "Authorization: Bearer \(F.server)\r\nContent-Type: application/json\r\n"
                    connection.send(Array((head + "Content-Length: 1048576\r\n\r\n{\"vehicleState\":").utf8))
                }
                return trickling.map { $0.readAll().end }
            }
            #expect(ends.allSatisfy { $0 == .closed }, "\(ends)")
            #expect(try await store.vehicle(provider: "demo-project", id: "v1") == nil)
            #expect(try await onThread { try RawConnection.get(port: port, path: Self.vehicle) } == 401)
        }
    }

    @Test(
        "D4: answered before its body was read (401), the connection says close and is closed, not drained for as long as the client sends"
    )
    func earlyAnswerCloses() async throws {
        var limits = ServerLimits()
        limits.drainTimeout = .milliseconds(500)
        try await Self.withLiveEmulator(limits: limits) { port, _ in
            let (text, end) = try await onThread {
                let connection = try RawConnection(port: port, receiveTimeout: 60)
                var head = "POST /v1/providers/demo-project/vehicles?vehicleId=v1 HTTP/1.1\r\nHost: x\r\n"
                head += "Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"
                connection.send(Array(head.utf8))
                return connection.readAll()
            }
            #expect(text.hasPrefix("HTTP/1.1 401"), "\(text)")
            #expect(text.lowercased().contains("connection: close"), "\(text)")
            #expect(end == .closed)
        }
    }

    @Test(
        "D4: one client address holds at most the configured connections; one over is closed unanswered, and a slot frees when one closes"
    )
    func connectionsPerClient() async throws {
        var limits = ServerLimits()
        limits.maximumConnectionsPerClient = 3
        // No idle timeout in the way: only the cap closes a connection here.
        limits.idleTimeout = .seconds(3600)
        try await Self.withLiveEmulator(limits: limits) { port, _ in
            let request = Array("GET \(Self.vehicle) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            var held = try await onThread {
                let held = try (0..<3).map { _ in try RawConnection(port: port, receiveTimeout: 60) }
                // Each of the three is answered, so each was accepted and counted before the fourth arrives.
                for connection in held {
                    connection.send(request)
                    _ = connection.responseStatus()
                }
                return held
            }
            let over = try await onThread { () -> Int? in
                let connection = try RawConnection(port: port, receiveTimeout: 60)
                connection.send(request)
                return connection.responseStatus()
            }
            #expect(over == nil, "a fourth connection from one address was answered")
            let second = held[1]
            let still = try await onThread { () -> Int? in
                second.send(request)
                return second.responseStatus()
            }
            #expect(still == 401, "the connections under the cap are served")
            // One of the three closes (its socket closed by the client): once the server has seen it, a new
            // connection is served.
            held.removeFirst()
            try await Waiting.until("a connection served once one of the three closed") {
                try await onThread { try RawConnection.get(port: port, path: Self.vehicle, receiveTimeout: 60) } == 401
            }
            #expect(held.count == 2)
        }
    }
}

/// Runs blocking socket work on a thread of its own: blocking a thread of Swift's cooperative pool (two on this
/// machine) would starve the in-process server under test.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A blocking TCP connection to 127.0.0.1, for requests no HTTP client library would send.
final class RawConnection: @unchecked Sendable {
    enum ReadEnd: Equatable { case closed, timedOut }
    private let descriptor: Int32

    /// How the last ``responseStatus()`` ended without a status, for a failing expectation's message.
    private(set) var failure = ""

    /// `receiveTimeout` is long: the whole suite runs at once on two cores, and has kept an in-process server from
    /// answering for over 10 seconds.
    init(port: Int, receiveTimeout: Int = 30) throws {
        #if os(Linux)
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if !os(Linux)
            var one: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    deinit { close(descriptor) }

    /// Sends what the peer accepts; stops quietly when the peer has closed the connection.
    func send(_ bytes: [UInt8]) {
        #if os(Linux)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { systemSend(descriptor, $0.baseAddress, $0.count, flags) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Sends `bytes` from another thread while reading the response: a server that answers before reading the whole
    /// request (413 for a body over the limit) and then closes may reset the connection, and a response read only
    /// after the send could be lost with it.
    func sendReadingStatus(_ bytes: [UInt8]) -> Int? {
        let sent = DispatchSemaphore(value: 0)
        Thread {
            self.send(bytes)
            sent.signal()
        }.start()
        let status = responseStatus()
        sent.wait()
        return status
    }

    /// The status code of the response, or nil when the connection closed without one.
    func responseStatus() -> Int? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.starts(with: Array("HTTP/1.1 ".utf8)) || received.count < 12 {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 {
                let reason = count == 0 ? "closed" : String(cString: strerror(errno))
                failure = "no status: \(reason) after \(received.count) bytes"
                return nil
            }
            received += buffer[..<count]
        }
        return Int(String(decoding: received[9..<12], as: UTF8.self))
    }

    /// Exactly `count` bytes, or nil if the connection ends or the receive timeout passes first.
    func receive(count: Int) -> [UInt8]? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < count {
            let read = recv(descriptor, &buffer, min(buffer.count, count - received.count), 0)
            if read <= 0 { return nil }
            received += buffer[..<read]
        }
        return received
    }

    /// Reads and discards until the peer closes the connection or the receive timeout passes.
    func readUntilClosed() -> ReadEnd {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return .closed }
            if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut : .closed }
        }
    }

    /// Everything received until the peer closes the connection or the receive timeout passes, and which it was.
    func readAll() -> (text: String, end: ReadEnd) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            let end: ReadEnd = count == 0 || !(errno == EAGAIN || errno == EWOULDBLOCK) ? .closed : .timedOut
            return (String(decoding: received, as: UTF8.self), end)
        }
    }

    /// A plain GET without credentials; returns the status.
    static func get(port: Int, path: String, receiveTimeout: Int = 30) throws -> Int? {
        let connection = try RawConnection(port: port, receiveTimeout: receiveTimeout)
        connection.send(Array("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        return connection.responseStatus()
    }
}
