import FleetAuthServerSupport
import NIOConcurrencyHelpers

/// Ports for test servers that are stopped and started again on the same port (a PostgreSQL cluster, a restarted
/// stack): outside the kernel's ephemeral range, so no port-0 bind or outgoing connection of a parallel test can take
/// the port while its server is down, and never handed twice in one test process.
public enum RestartablePorts {
    private static let reserved = NIOLockedValueBox<Set<Int>>([])

    /// A free loopback port of its own.
    public static func reserve() throws -> Int {
        try reserved.withLockedValue { taken in
            let port = try LoopbackPort.freeOutsideEphemeralRange(excluding: taken)
            taken.insert(port)
            return port
        }
    }
}
