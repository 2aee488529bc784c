/// What an app user is to a FleetAuth token server: a driver, a consumer, an operator of the fleet, or a backend
/// service. The token server's login answer names it, and it decides which token endpoints the user may call.
///
/// New roles are new static members, so the type can grow without breaking callers.
public struct AppUserRole: Sendable, Hashable, CustomStringConvertible {
    /// The role's name on the wire and in the database: `driver`, `consumer`, `operator` or `service`.
    public let rawValue: String

    private init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The role named `rawValue`, if it is one of ``all``.
    public init?(rawValue: String) {
        guard let role = Self.all.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = role
    }

    public var description: String { rawValue }

    /// Drives vehicles: gets driver tokens for the vehicles it was granted.
    public static let driver = Self("driver")
    /// Rides: gets consumer tokens for the trips it was granted.
    public static let consumer = Self("consumer")
    /// Runs the fleet: gets server and fleet-reader tokens, and manages users.
    public static let `operator` = Self("operator")

    /// A backend (a dispatch service booking trips): manages grants through the admin API with an API key, and
    /// nothing else — no tokens, no password login.
    public static let service = Self("service")

    /// Every role, in a stable order.
    public static let all: [Self] = [.driver, .consumer, .operator, .service]

    /// The names of every role, for messages: `driver, consumer, operator, service`.
    public static var names: String { all.map(\.rawValue).joined(separator: ", ") }
}
