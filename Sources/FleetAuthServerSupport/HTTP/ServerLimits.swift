/// What one client may send a FleetAuth server, so that a hostile or broken client costs bounded memory and
/// never holds a connection forever.
public struct ServerLimits: Sendable, Hashable {
    /// The largest single header line. A Fleet Engine token is at most 8 KiB, so 16 KiB leaves room.
    public var maximumHeaderFieldSize: Int
    /// The largest header section.
    public var maximumHeaderListSize: Int
    /// The most header fields in one request.
    public var maximumHeaderCount: Int
    /// How long a connection may stay without a complete request before it is closed (slow clients).
    public var idleTimeout: Duration
    /// The largest request body, in bytes; a larger one is answered 413.
    public var maximumBodySize: Int
    /// How long a request's body may take to arrive after its head before the connection is closed (a client
    /// trickling a byte at a time keeps the idle timeout from firing).
    public var requestTimeout: Duration
    /// How long what remains of a body is read after the request was answered without it (a 401, a 413), before
    /// the connection is closed.
    public var drainTimeout: Duration
    /// How many connections one client address may hold at once; 0 for no limit. Behind a load balancer every
    /// connection comes from its addresses: raise it there, or set 0.
    public var maximumConnectionsPerClient: Int

    public init(
        maximumHeaderFieldSize: Int = 16 * 1024,
        maximumHeaderListSize: Int = 64 * 1024,
        maximumHeaderCount: Int = 100,
        idleTimeout: Duration = .seconds(30),
        maximumBodySize: Int = 1 << 20,
        requestTimeout: Duration = .seconds(30),
        drainTimeout: Duration = .seconds(2),
        maximumConnectionsPerClient: Int = 512
    ) {
        self.maximumHeaderFieldSize = maximumHeaderFieldSize
        self.maximumHeaderListSize = maximumHeaderListSize
        self.maximumHeaderCount = maximumHeaderCount
        self.idleTimeout = idleTimeout
        self.maximumBodySize = maximumBodySize
        self.requestTimeout = requestTimeout
        self.drainTimeout = drainTimeout
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
    }
}
