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

/// No free loopback port could be found; the message says why.
package struct LoopbackPortError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
