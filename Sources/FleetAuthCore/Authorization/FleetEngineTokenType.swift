/// A kind of Fleet Engine token with its exact `authorization` claims, as Google's Java library
/// (`java-fleetengine-auth`) mints them.
///
/// | type | `authorization` |
/// |---|---|
/// | ``server`` | `{"tripid":"*","vehicleid":"*"}` |
/// | ``driver(vehicleID:)`` | `{"vehicleid":"<id or *>"}` |
/// | ``consumer(tripID:)`` | `{"tripid":"<id or *>"}` |
/// | ``deliveryServer`` | `{"taskid":"*","trackingid":"*","deliveryvehicleid":"*"}` |
/// | ``deliveryConsumer(taskID:)`` / ``deliveryConsumer(trackingID:)`` | `{"taskid":"<id>"}` / `{"trackingid":"<id>"}` |
/// | ``untrustedDeliveryDriver(deliveryVehicleID:)`` | `{"deliveryvehicleid":"<id>"}` |
/// | ``trustedDeliveryDriver(deliveryVehicleID:taskID:)`` | `{"deliveryvehicleid":"<id>"}`, plus `"taskid"` when given |
/// | ``deliveryFleetReader`` | `{"taskid":"*","trackingid":"*","deliveryvehicleid":"*"}` |
/// | ``fleetReader`` | `{"tripid":"*","taskid":"*","trackingid":"*","vehicleid":"*","deliveryvehicleid":"*"}` |
/// | ``custom(_:)`` | the claims given |
///
/// IDs must follow ``FleetEngineID``'s rules; an empty ID is an error, never a silent wildcard. New kinds are new
/// static members, so the type can grow without breaking callers.
public struct FleetEngineTokenType: Sendable, Hashable, CustomStringConvertible {
    /// The type's stable name, such as `driver` or `delivery_consumer`.
    public let name: String
    /// The claims a token of this type carries.
    public let authorization: AuthorizationClaims

    private init(name: String, authorization: AuthorizationClaims) {
        self.name = name
        self.authorization = authorization
    }

    public var description: String { name }

    private static let all = FleetEngineID.wildcard

    /// A trusted backend's on-demand token: every vehicle and trip.
    public static let server = Self(name: "server", authorization: .init(vehicleID: all, tripID: all))

    /// A Driver SDK token for one vehicle (or `*`).
    public static func driver(vehicleID: String) throws(FleetEngineIDError) -> Self {
        try checked(vehicleID, field: "vehicleID", allowWildcard: true)
        return Self(name: "driver", authorization: .init(vehicleID: vehicleID))
    }

    /// A Consumer SDK token for one trip (or `*`).
    public static func consumer(tripID: String) throws(FleetEngineIDError) -> Self {
        try checked(tripID, field: "tripID", allowWildcard: true)
        return Self(name: "consumer", authorization: .init(tripID: tripID))
    }

    /// A trusted backend's delivery token: every delivery vehicle, task and tracking ID.
    public static let deliveryServer = Self(
        name: "delivery_server",
        authorization: .init(deliveryVehicleID: all, taskID: all, trackingID: all)
    )

    /// A delivery consumer token for one task.
    public static func deliveryConsumer(taskID: String) throws(FleetEngineIDError) -> Self {
        try checked(taskID, field: "taskID", allowWildcard: false)
        return Self(name: "delivery_consumer", authorization: .init(taskID: taskID))
    }

    /// A delivery consumer token for one tracking ID.
    public static func deliveryConsumer(trackingID: String) throws(FleetEngineIDError) -> Self {
        try checked(trackingID, field: "trackingID", allowWildcard: false)
        return Self(name: "delivery_consumer", authorization: .init(trackingID: trackingID))
    }

    /// An untrusted delivery driver's token for one delivery vehicle.
    public static func untrustedDeliveryDriver(deliveryVehicleID: String) throws(FleetEngineIDError) -> Self {
        try checked(deliveryVehicleID, field: "deliveryVehicleID", allowWildcard: false)
        return Self(name: "untrusted_delivery_driver", authorization: .init(deliveryVehicleID: deliveryVehicleID))
    }

    /// A trusted delivery driver's token for one delivery vehicle, optionally also one task.
    public static func trustedDeliveryDriver(
        deliveryVehicleID: String,
        taskID: String? = nil
    ) throws(FleetEngineIDError) -> Self {
        try checked(deliveryVehicleID, field: "deliveryVehicleID", allowWildcard: false)
        if let taskID { try checked(taskID, field: "taskID", allowWildcard: false) }
        return Self(
            name: "trusted_delivery_driver",
            authorization: .init(deliveryVehicleID: deliveryVehicleID, taskID: taskID)
        )
    }

    /// A read-only token over every delivery vehicle, task and tracking ID.
    public static let deliveryFleetReader = Self(
        name: "delivery_fleet_reader",
        authorization: .init(deliveryVehicleID: all, taskID: all, trackingID: all)
    )

    /// A read-only token over the whole fleet, on-demand and delivery.
    public static let fleetReader = Self(
        name: "fleet_reader",
        authorization: .init(vehicleID: all, tripID: all, deliveryVehicleID: all, taskID: all, trackingID: all)
    )

    /// A token with the claims given, which must not be empty and must pass ``AuthorizationClaims/validate()``.
    public static func custom(_ claims: AuthorizationClaims) throws(AuthorizationClaimsError) -> Self {
        if claims.isEmpty { throw .noClaims }
        try claims.validate()
        return Self(name: "custom", authorization: claims)
    }

    private static func checked(_ id: String, field: String, allowWildcard: Bool) throws(FleetEngineIDError) {
        if allowWildcard && id == FleetEngineID.wildcard { return }
        if id == FleetEngineID.wildcard {
            throw FleetEngineIDError(field: field, problem: "must name one resource, not \"*\", for this token type")
        }
        try FleetEngineID.validate(id, field: field)
    }
}
