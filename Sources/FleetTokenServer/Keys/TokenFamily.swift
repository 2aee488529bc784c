public import FleetAuthCore

/// The service account a token is signed with. Fleet Engine takes a token's permissions from the role of the
/// account that signed it, so each family of tokens has an account of its own, with only the roles it needs.
public enum TokenFamily: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Driver tokens (`vehicleid`), signed by a Driver SDK User.
    case driver
    /// Consumer tokens (`tripid`), signed by a Consumer SDK User.
    case consumer
    /// Server and fleet-reader tokens (`*`), signed by an account that is a Fleet Engine Service Super User and a
    /// Delivery Fleet Reader.
    case server
    /// Delivery driver and delivery consumer tokens, signed by an account with the untrusted-driver and
    /// delivery-consumer roles.
    case delivery

    public var description: String { rawValue }

    /// The service-account name of the family's account: `fleetauth-driver@PROJECT.iam.gserviceaccount.com`.
    public var accountName: String { "fleetauth-\(rawValue)" }

    /// The roles the family's account should hold in Fleet Engine (and that an emulator trusting it grants).
    public var roles: [FleetEngineRole] {
        switch self {
        case .driver: [.driverSdkUser]
        case .consumer: [.consumerSdkUser]
        case .server: [.serviceSuperUser, .deliveryFleetReader]
        case .delivery: [.deliveryUntrustedDriver, .deliveryConsumer]
        }
    }
}

/// One token endpoint: the path segment, the family that signs it, the grant it needs and the token type.
public struct TokenEndpoint: Sendable, Hashable {
    /// The path segment after `/token/`.
    public let name: String
    /// The family whose key signs the token.
    public let family: TokenFamily
    /// The grant a user needs for the requested ID; `nil` for the operator-only endpoints without an ID.
    public let grantKind: GrantKind?
    /// Whether the LMFS snake_case keys (`creation_timestamp_ms`, `expiration_timestamp_ms`) are added.
    public let deliveryStyle: Bool
    /// The token type for an ID (the ID is ignored by the operator-only endpoints).
    let tokenType: @Sendable (String) throws -> FleetEngineTokenType

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// `GET /token/driver/{vehicleId}`.
    public static let driver = Self(name: "driver", family: .driver, grantKind: .vehicle, deliveryStyle: false) {
        try .driver(vehicleID: $0)
    }
    /// `GET /token/consumer/{tripId}`.
    public static let consumer = Self(name: "consumer", family: .consumer, grantKind: .trip, deliveryStyle: false) {
        try .consumer(tripID: $0)
    }
    /// `GET /token/server` (operators only).
    public static let server = Self(name: "server", family: .server, grantKind: nil, deliveryStyle: false) { _ in
        .server
    }
    /// `GET /token/fleet_reader` (operators only).
    public static let fleetReader = Self(name: "fleet_reader", family: .server, grantKind: nil, deliveryStyle: true) {
        _ in .fleetReader
    }
    /// `GET /token/delivery_driver/{deliveryVehicleId}`.
    public static let deliveryDriver = Self(
        name: "delivery_driver", family: .delivery, grantKind: .deliveryVehicle, deliveryStyle: true
    ) { try .untrustedDeliveryDriver(deliveryVehicleID: $0) }
    /// `GET /token/delivery_consumer/{trackingId}`.
    public static let deliveryConsumer = Self(
        name: "delivery_consumer", family: .delivery, grantKind: .tracking, deliveryStyle: true
    ) { try .deliveryConsumer(trackingID: $0) }

    public static let all: [Self] = [driver, consumer, server, fleetReader, deliveryDriver, deliveryConsumer]
}
