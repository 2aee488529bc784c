import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A free loopback TCP port, found by binding port 0 and closing the socket: for a server that must know its port
/// before it starts (the local stack's IAM stand-ins, a test's own PostgreSQL).
package enum LoopbackPort {
    /// The port, or an error saying which step failed.
    package static func free() throws -> Int {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw LoopbackPortError("Cannot open a socket to find a free port.") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw LoopbackPortError("Cannot bind a loopback socket to find a free port.") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension LoopbackPort {
    /// A port that nothing else on this machine is handed while its owner is stopped: below the kernel's ephemeral
    /// range (`net.ipv4.ip_local_port_range`, from 32768 by default), which every port-0 bind and every outgoing
    /// connection draws from, free on 127.0.0.1 now, and not in `taken`. For a server that is stopped and started
    /// again on the same port: a port from the ephemeral range can meanwhile become another socket's, and the
    /// restart then fails with "address already in use".
    package static func freeOutsideEphemeralRange(excluding taken: Set<Int>) throws -> Int {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let ephemeralStart = range?.first ?? 32_768
        let candidates = 20_000..<max(20_001, min(ephemeralStart, 32_768))
        for _ in 0..<1_000 {
            let port = Int.random(in: candidates)
            if !taken.contains(port), isFree(port) { return port }
        }
        throw LoopbackPortError("No free loopback port between \(candidates.lowerBound) and \(candidates.upperBound).")
    }

    /// Whether a socket can bind 127.0.0.1:`port` now.
    static func isFree(_ port: Int) -> Bool {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// No free loopback port could be found; the message says why.
package struct LoopbackPortError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
