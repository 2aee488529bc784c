public import FleetAuthCore

/// The service account a token is signed with. Fleet Engine takes a token's permissions from the role of the
/// account that signed it, so each family of tokens has an account of its own, with only the roles it needs.
public enum TokenFamily: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Driver tokens (`vehicleid`), signed by a Driver SDK User.
    case driver
    /// Consumer tokens (`tripid`), signed by a Consumer SDK User.
    case consumer
    /// Server tokens (`*` for vehicles and trips), signed by a Fleet Engine Service Super User.
    case server
    /// Delivery driver and delivery consumer tokens, signed by an account with the untrusted-driver and
    /// delivery-consumer roles.
    case delivery
    /// Delivery server tokens (`*` for delivery vehicles, tasks and tracking IDs), for operators and backends,
    /// signed by a Delivery Super User: an account of its own, so that no other family's tokens can write
    /// deliveries.
    case deliveryServer = "delivery-server"
    /// Fleet-reader tokens (`*` everywhere, for the fleet console and dashboards), signed
    /// by a Fleet Engine Viewer: an account whose role only reads, so a reader token that leaks cannot write.
    case reader

    public var description: String { rawValue }

    /// Every family's name, for messages: `driver, consumer, server, delivery, delivery-server, reader`.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The service-account name of the family's account: `fleetauth-driver@PROJECT.iam.gserviceaccount.com`.
    public var accountName: String { "fleetauth-\(rawValue)" }

    /// The roles the family's account should hold in Fleet Engine (and that an emulator trusting it grants).
    public var roles: [FleetEngineRole] {
        switch self {
        case .driver: [.driverSdkUser]
        case .consumer: [.consumerSdkUser]
        case .server: [.serviceSuperUser]
        case .delivery: [.deliveryUntrustedDriver, .deliveryConsumer]
        case .deliveryServer: [.deliverySuperUser]
        case .reader: [.viewer]
        }
    }
}

extension TokenServerEndpoint {
    /// The family whose key signs the endpoint's tokens.
    public var family: TokenFamily {
        switch self {
        case .driver: .driver
        case .consumer: .consumer
        case .deliveryDriver, .deliveryConsumer: .delivery
        case .deliveryServer: .deliveryServer
        case .fleetReader: .reader
        default: .server
        }
    }

    /// The grant a user needs for the requested ID; `nil` for the operator-only endpoints without an ID.
    public var grantKind: GrantKind? {
        switch self {
        case .driver: .vehicle
        case .consumer: .trip
        case .deliveryDriver: .deliveryVehicle
        case .deliveryConsumer: .tracking
        default: nil
        }
    }
}
