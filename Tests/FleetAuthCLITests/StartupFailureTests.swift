import FleetAuthServerTesting
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
        let directory = try CLI.temporaryDirectory()
        _ = FileManager.default.createFile(atPath: directory + "/file", contents: Data("not a directory".utf8))
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
