/// One token endpoint of a FleetAuth token server, as the server routes it and the client calls it: the path,
/// the ID it takes and the kind of token it answers with.
///
/// | endpoint | path | token |
/// |---|---|---|
/// | ``driver`` | `/token/driver/{vehicleId}` | ``FleetEngineTokenType/driver(vehicleID:)`` |
/// | ``consumer`` | `/token/consumer/{tripId}` | ``FleetEngineTokenType/consumer(tripID:)`` |
/// | ``deliveryDriver`` | `/token/delivery_driver/{deliveryVehicleId}` | ``FleetEngineTokenType/untrustedDeliveryDriver(deliveryVehicleID:)`` |
/// | ``deliveryConsumer`` | `/token/delivery_consumer/{trackingId}` | ``FleetEngineTokenType/deliveryConsumer(trackingID:)`` |
/// | ``server`` | `/token/server` (operators) | ``FleetEngineTokenType/server`` |
/// | ``deliveryServer`` | `/token/delivery_server` (operators) | ``FleetEngineTokenType/deliveryServer`` |
/// | ``fleetReader`` | `/token/fleet_reader` (operators) | ``FleetEngineTokenType/fleetReader`` |
///
/// The paths and answers are those of Google's sample backends, so their apps work against a FleetAuth token
/// server unchanged. Equality compares the name.
public struct TokenServerEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The path segment after `/token/`, such as `driver`.
    public let name: String
    /// The name of the ID the path takes (`vehicleId`), or `nil` for the operator-only endpoints without one.
    public let idParameter: String?
    /// Whether the answer also carries the delivery samples' snake_case keys (`creation_timestamp_ms`,
    /// `expiration_timestamp_ms`).
    public let addsDeliveryKeys: Bool
    private let makeTokenType: @Sendable (String) throws(FleetEngineIDError) -> FleetEngineTokenType

    private init(
        name: String,
        idParameter: String?,
        addsDeliveryKeys: Bool,
        tokenType: @escaping @Sendable (String) throws(FleetEngineIDError) -> FleetEngineTokenType
    ) {
        self.name = name
        self.idParameter = idParameter
        self.addsDeliveryKeys = addsDeliveryKeys
        self.makeTokenType = tokenType
    }

    public var description: String { name }

    /// The path with the ID as a `{placeholder}`, such as `/token/driver/{vehicleId}`: a URL template for
    /// `TokenEndpointFetcher`.
    public var pathTemplate: String { "/token/\(name)" + (idParameter.map { "/{\($0)}" } ?? "") }

    /// The kind of token the endpoint answers with for `id` (ignored by the endpoints without an ID).
    public func tokenType(id: String) throws(FleetEngineIDError) -> FleetEngineTokenType { try makeTokenType(id) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// Driver tokens for a granted vehicle.
    public static let driver = Self(name: "driver", idParameter: "vehicleId", addsDeliveryKeys: false) {
        (id) throws(FleetEngineIDError) in try .driver(vehicleID: id)
    }
    /// Consumer tokens for a granted trip.
    public static let consumer = Self(name: "consumer", idParameter: "tripId", addsDeliveryKeys: false) {
        (id) throws(FleetEngineIDError) in try .consumer(tripID: id)
    }
    /// Untrusted delivery driver tokens for a granted delivery vehicle.
    public static let deliveryDriver = Self(
        name: "delivery_driver",
        idParameter: "deliveryVehicleId",
        addsDeliveryKeys: true
    ) { (id) throws(FleetEngineIDError) in try .untrustedDeliveryDriver(deliveryVehicleID: id) }
    /// Delivery consumer tokens for a granted tracking ID.
    public static let deliveryConsumer = Self(
        name: "delivery_consumer",
        idParameter: "trackingId",
        addsDeliveryKeys: true
    ) { (id) throws(FleetEngineIDError) in try .deliveryConsumer(trackingID: id) }
    /// Server tokens, for operators.
    public static let server = Self(name: "server", idParameter: nil, addsDeliveryKeys: false) { _ in .server }
    /// Delivery server tokens, for operators and backends.
    public static let deliveryServer = Self(name: "delivery_server", idParameter: nil, addsDeliveryKeys: true) {
        _ in .deliveryServer
    }
    /// Fleet reader tokens, for operators.
    public static let fleetReader = Self(name: "fleet_reader", idParameter: nil, addsDeliveryKeys: true) { _ in
        .fleetReader
    }

    /// Every endpoint.
    public static let all: [Self] = [
        .driver, .consumer, .deliveryDriver, .deliveryConsumer, .server, .deliveryServer, .fleetReader,
    ]

    /// The endpoint named `name`, if there is one.
    public init?(name: String) {
        guard let endpoint = Self.all.first(where: { $0.name == name }) else { return nil }
        self = endpoint
    }
}
