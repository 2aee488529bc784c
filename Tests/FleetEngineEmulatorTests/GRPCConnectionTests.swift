import FleetAuthCore
import FleetAuthServerCore
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import ServiceLifecycle
import Testing

@Suite("gRPC connections (live socket)")
struct GRPCConnectionTests {
    typealias F = EmulatorFixture
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
    static let emptySettings: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 0, 0]

    @available(FleetAuthGRPC, *)
    static func withGRPCEmulator(
        _ configuration: EmulatorServer.Configuration,
        _ body: @Sendable (_ port: Int) async throws -> Void
    ) async throws {
        let server = EmulatorServer(
            configuration: configuration,
            accounts: F.accounts,
            store: try SQLiteFleetStore(inMemory: ())
        )
        let ports = AsyncStream.makeStream(of: Int.self)
        let grpc = server.grpcServer(port: 0) { ports.continuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [grpc], logger: .silent(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await body(port)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @available(FleetAuthGRPC, *)
    @Test(
        "silent clients are closed after the idle timeout and a grace period, even those that never answer the GOAWAY's PING; others are served"
    )
    func silentClients() async throws {
        var configuration = EmulatorServer.Configuration()
        // The server closes each silent connection about 2 s after it opened (1 s idle, 1 s grace). The verdict is
        // closed versus open: the 60-second receive timeout is only a guard against a server that never closes
        // them, thirty times the expected wait.
        configuration.limits.idleTimeout = .seconds(1)
        configuration.grpc.silentClientGrace = .seconds(1)
        try await Self.withGRPCEmulator(configuration) { port in
            // 25 that send nothing, 25 that send HTTP/2's preface and SETTINGS and then nothing (no PING answered).
            let connections = try await onThread {
                try (0..<50).map { index in
                    let connection = try RawConnection(port: port, receiveTimeout: 60)
                    if index.isMultiple(of: 2) { connection.send(Self.preface + Self.emptySettings) }
                    return connection
                }
            }
            let ends = try await onThread { connections.map { $0.readUntilClosed() } }
            #expect(
                ends.allSatisfy { $0 == .closed },
                "\(ends.filter { $0 != .closed }.count) of 50 silent connections still open 60 s after the server should have closed them"
            )
        }
    }

    @available(FleetAuthGRPC, *)
    @Test("the server's SETTINGS limit concurrent calls per connection (100 by default, configurable)")
    func streamLimit() async throws {
        for limit in [100, 7] {
            var configuration = EmulatorServer.Configuration()
            configuration.grpc.maximumConcurrentStreams = limit
            try await Self.withGRPCEmulator(configuration) { port in
                let settings = try await onThread {
                    let connection = try RawConnection(port: port)
                    connection.send(Self.preface + Self.emptySettings)
                    return connection.receive(count: 9).flatMap { header -> [UInt8: UInt32]? in
                        guard header[3] == 4 else { return nil }
                        let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
                        guard let payload = connection.receive(count: length) else { return nil }
                        return stride(from: 0, to: length - 5, by: 6).reduce(into: [:]) { settings, offset in
                            let value = payload[offset + 2..<offset + 6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                            settings[payload[offset + 1]] = value
                        }
                    }
                }
                // SETTINGS_MAX_CONCURRENT_STREAMS is setting 3.
                #expect(settings?[3] == UInt32(limit))
            }
        }
    }

    /// An HTTP/2 frame: 9 bytes of header (length, type, flags, stream), then the payload.
    static func frame(type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let length = UInt32(payload.count)
        var bytes: [UInt8] = [UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8)]
        bytes.append(UInt8(truncatingIfNeeded: length))
        bytes.append(type)
        bytes.append(flags)
        for shift: UInt32 in [24, 16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: (stream & 0x7FFF_FFFF) >> shift)) }
        return bytes + payload
    }

    /// A header block of literal fields without indexing and without Huffman coding (HPACK, RFC 7541 6.2.2).
    static func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
        var block: [UInt8] = []
        // A string's length: a 7-bit prefix, then 7 bits a byte for what does not fit (RFC 7541 5.1).
        func string(_ text: String) {
            var length = text.utf8.count
            if length < 127 {
                block.append(UInt8(length))
            } else {
                block.append(127)
                length -= 127
                while length >= 128 {
                    block.append(UInt8(length % 128 + 128))
                    length /= 128
                }
                block.append(UInt8(length))
            }
            block += Array(text.utf8)
        }
        for (name, value) in fields {
            block.append(0x00)
            string(name)
            string(value)
        }
        return block
    }

    @available(FleetAuthGRPC, *)
    @Test("a call whose request is trickled (DATA without END_STREAM) is reset at the request timeout")
    func trickledCall() async throws {
        var configuration = EmulatorServer.Configuration()
        configuration.limits.requestTimeout = .seconds(1)
        try await Self.withGRPCEmulator(configuration) { port in
            let reset = try await onThread { () -> Bool in
                // The receive timeout (60 s) only guards against a server that never resets the stream.
                let connection = try RawConnection(port: port, receiveTimeout: 60)
                let headers = Self.headerBlock([
                    (":method", "POST"), (":scheme", "http"), (":authority", "x"),
                    (":path", "/maps.fleetengine.v1.VehicleService/GetVehicle"),
                    ("content-type", "application/grpc"), ("te", "trailers"),
                    ("authorization", "Bearer \(F.server)"),
                ])
                // HEADERS with END_HEADERS, then DATA with the start of a 100-byte message, and no END_STREAM.
                connection.send(
                    Self.preface + Self.emptySettings
                        + Self.frame(type: 1, flags: 0x4, stream: 1, headers)
                        + Self.frame(type: 0, flags: 0, stream: 1, [0, 0, 0, 0, 100])
                )
                while let header = connection.receive(count: 9) {
                    let length: Int = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
                    let stream: UInt32 = header[5...8].reduce(UInt32(0)) { ($0 << 8) | UInt32($1) } & 0x7FFF_FFFF
                    guard length == 0 || connection.receive(count: length) != nil else { return false }
                    if header[3] == 4, header[4] & 1 == 0 {
                        connection.send(Self.frame(type: 4, flags: 1, stream: 0, []))  // SETTINGS ACK
                    }
                    // RST_STREAM on the call's stream, or its trailers (HEADERS with END_STREAM) ending it.
                    if stream == 1, header[3] == 3 || (header[3] == 1 && header[4] & 1 == 1) { return true }
                }
                return false
            }
            #expect(reset)
        }
    }
}
