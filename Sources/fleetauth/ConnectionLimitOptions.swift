import ArgumentParser
import FleetAuthServerSupport

/// How long a request may take to arrive, and how many connections one client may hold (`--request-timeout`,
/// `--max-connections-per-client`), on both servers.
struct ConnectionLimitOptions: ParsableArguments {
    @Option(
        help: """
            Seconds a request's body may take to arrive after its head (over gRPC: a call's request after the call \
            opened) before the connection (gRPC: the call) is closed: a client trickling bytes never idles.
            """
    )
    var requestTimeout: Double = 30
    @Option(
        help: """
            Connections one client address may hold at once; 0 for no limit. Behind a load balancer every \
            connection comes from its addresses: raise it, or set 0.
            """
    )
    var maxConnectionsPerClient: Int = 512

    func validate() throws {
        if !(requestTimeout > 0 && requestTimeout.isFinite) {
            throw ValidationError("--request-timeout must be more than 0 seconds.")
        }
        if maxConnectionsPerClient < 0 { throw ValidationError("--max-connections-per-client must be 0 or more.") }
    }

    /// `limits` with these options applied.
    func applied(to limits: ServerLimits) -> ServerLimits {
        var limits = limits
        limits.requestTimeout = .milliseconds(Int64(requestTimeout * 1000))
        limits.maximumConnectionsPerClient = maxConnectionsPerClient
        return limits
    }
}
