/// What a token is asked for: the resource IDs an app is about to touch.
///
/// Shaped like the SDKs' `GMTDAuthorizationContext` / `AuthTokenContext`. A client keeps one cached token per
/// context, so two contexts are equal exactly when every ID is.
public struct AuthorizationContext: Sendable, Hashable, CustomStringConvertible {
    public var vehicleID: String?
    public var tripID: String?
    public var deliveryVehicleID: String?
    public var taskID: String?
    public var trackingID: String?

    public init(
        vehicleID: String? = nil,
        tripID: String? = nil,
        deliveryVehicleID: String? = nil,
        taskID: String? = nil,
        trackingID: String? = nil
    ) {
        self.vehicleID = vehicleID
        self.tripID = tripID
        self.deliveryVehicleID = deliveryVehicleID
        self.taskID = taskID
        self.trackingID = trackingID
    }

    /// A driver app's context.
    public static func vehicle(_ id: String) -> Self { Self(vehicleID: id) }
    /// A consumer app's context.
    public static func trip(_ id: String) -> Self { Self(tripID: id) }
    /// A delivery driver app's context.
    public static func deliveryVehicle(_ id: String) -> Self { Self(deliveryVehicleID: id) }
    /// A shipment tracking page's context: one tracking ID.
    public static func tracking(_ id: String) -> Self { Self(trackingID: id) }

    public var description: String {
        let parts = [
            vehicleID.map { "vehicle \($0)" }, tripID.map { "trip \($0)" },
            deliveryVehicleID.map { "delivery vehicle \($0)" }, taskID.map { "task \($0)" },
            trackingID.map { "tracking \($0)" },
        ].compactMap { $0 }
        return parts.isEmpty ? "no context" : parts.joined(separator: ", ")
    }
}
