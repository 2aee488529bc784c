/// The Fleet Engine private claims: the `authorization` object of a token.
///
/// Each value names the one resource a token may touch, or ``FleetEngineID/wildcard`` for all of them. The claims
/// only narrow a token: what it may do comes from the role of the service account that signed it.
///
/// | JSON key | property | JSON type |
/// |---|---|---|
/// | `vehicleid` | ``vehicleID`` | string |
/// | `tripid` | ``tripID`` | string |
/// | `deliveryvehicleid` | ``deliveryVehicleID`` | string |
/// | `taskid` | ``taskID`` | string |
/// | `taskids` | ``taskIDs`` | array of strings; `["*"]` only with `*` as the sole element |
/// | `trackingid` | ``trackingID`` | string |
public struct AuthorizationClaims: Sendable, Hashable {
    /// On-demand vehicle ID (Driver SDK tokens, and server tokens with `*`).
    public var vehicleID: String?
    /// On-demand trip ID (Consumer SDK tokens).
    public var tripID: String?
    /// Delivery vehicle ID.
    public var deliveryVehicleID: String?
    /// Delivery task ID.
    public var taskID: String?
    /// Task IDs for `BatchCreateTasks`.
    public var taskIDs: [String]?
    /// Shipment tracking ID.
    public var trackingID: String?

    public init(
        vehicleID: String? = nil,
        tripID: String? = nil,
        deliveryVehicleID: String? = nil,
        taskID: String? = nil,
        taskIDs: [String]? = nil,
        trackingID: String? = nil
    ) {
        self.vehicleID = vehicleID
        self.tripID = tripID
        self.deliveryVehicleID = deliveryVehicleID
        self.taskID = taskID
        self.taskIDs = taskIDs
        self.trackingID = trackingID
    }

    /// The JSON keys of the claims, as Fleet Engine spells them.
    public enum Key {
        public static let vehicleID = "vehicleid"
        public static let tripID = "tripid"
        public static let deliveryVehicleID = "deliveryvehicleid"
        public static let taskID = "taskid"
        public static let taskIDs = "taskids"
        public static let trackingID = "trackingid"
        static let all: Set<String> = [vehicleID, tripID, deliveryVehicleID, taskID, taskIDs, trackingID]
    }

    /// Whether no claim is set. Fleet Engine refuses such a token: "JWT does not contain any scopes."
    public var isEmpty: Bool {
        vehicleID == nil && tripID == nil && deliveryVehicleID == nil && taskID == nil && taskIDs == nil
            && trackingID == nil
    }

    /// The `authorization` object.
    public var jsonObject: JSONObject {
        var object = JSONObject()
        if let tripID { object[Key.tripID] = .string(tripID) }
        if let vehicleID { object[Key.vehicleID] = .string(vehicleID) }
        if let deliveryVehicleID { object[Key.deliveryVehicleID] = .string(deliveryVehicleID) }
        if let taskID { object[Key.taskID] = .string(taskID) }
        if let taskIDs { object[Key.taskIDs] = .array(taskIDs.map(JSONValue.string)) }
        if let trackingID { object[Key.trackingID] = .string(trackingID) }
        return object
    }

    /// Reads an `authorization` object strictly: only the six keys above, each with its JSON type, every value
    /// a valid ID or `*`, and `taskids` by its rules. Key names are case-sensitive (`VehicleId` is refused).
    public init(json object: JSONObject) throws(AuthorizationClaimsError) {
        self.init()
        for member in object {
            switch member.key {
            case Key.vehicleID: vehicleID = try Self.string(member)
            case Key.tripID: tripID = try Self.string(member)
            case Key.deliveryVehicleID: deliveryVehicleID = try Self.string(member)
            case Key.taskID: taskID = try Self.string(member)
            case Key.trackingID: trackingID = try Self.string(member)
            case Key.taskIDs:
                guard case .array(let elements) = member.value else {
                    throw .wrongType(key: member.key, expected: "an array of strings", found: member.value.typeName)
                }
                var ids: [String] = []
                for element in elements {
                    guard case .string(let id) = element else {
                        throw .wrongType(key: member.key, expected: "an array of strings", found: element.typeName)
                    }
                    ids.append(id)
                }
                taskIDs = ids
            default:
                throw .unknownKey(member.key)
            }
        }
        try validate()
    }

    private static func check(_ value: String?, _ key: String) throws(AuthorizationClaimsError) {
        guard let value, value != FleetEngineID.wildcard else { return }
        do {
            try FleetEngineID.validate(value, field: key)
        } catch {
            throw .invalidID(error)
        }
    }

    private static func string(_ member: JSONObject.Member) throws(AuthorizationClaimsError) -> String {
        guard case .string(let value) = member.value else {
            throw .wrongType(key: member.key, expected: "a string", found: member.value.typeName)
        }
        return value
    }

    /// Checks every value against the ID rules and the `taskids` rules.
    public func validate() throws(AuthorizationClaimsError) {
        try Self.check(vehicleID, Key.vehicleID)
        try Self.check(tripID, Key.tripID)
        try Self.check(deliveryVehicleID, Key.deliveryVehicleID)
        try Self.check(taskID, Key.taskID)
        try Self.check(trackingID, Key.trackingID)
        if let taskIDs {
            if taskIDs.isEmpty { throw .invalidTaskIDs("must list at least one task ID") }
            if taskIDs.contains(FleetEngineID.wildcard) && taskIDs.count > 1 {
                throw .invalidTaskIDs("may hold \"*\" only as its sole element")
            }
            if Set(taskIDs).count != taskIDs.count { throw .invalidTaskIDs("must not list a task ID twice") }
            for id in taskIDs where id != FleetEngineID.wildcard {
                do {
                    try FleetEngineID.validate(id, field: Key.taskIDs)
                } catch {
                    throw .invalidID(error)
                }
            }
            if deliveryVehicleID != nil || trackingID != nil || taskID != nil {
                throw .invalidTaskIDs("must not be combined with deliveryvehicleid, trackingid or taskid")
            }
        }
    }
}

/// Why an `authorization` object was refused.
public struct AuthorizationClaimsError: CodedError {
    /// A stable code, safe for logs and metric labels. Codes are static members, so new ones can be added without
    /// breaking callers.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let unknownKey = Code("unknown_key")
        public static let wrongType = Code("wrong_type")
        public static let invalidID = Code("invalid_id")
        public static let invalidTaskIDs = Code("invalid_taskids")
        public static let noClaims = Code("no_claims")
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation naming the claim.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static let unknownKey = Self(.unknownKey, "unknown authorization claim")
    public static let wrongType = Self(.wrongType, "an authorization claim has the wrong JSON type")
    public static let invalidID = Self(.invalidID, "an authorization claim holds an invalid ID")
    public static let invalidTaskIDs = Self(.invalidTaskIDs, "invalid taskids claim")
    public static let noClaims = Self(.noClaims, "a token needs at least one authorization claim")

    static func unknownKey(_ key: String) -> Self {
        Self(
            .unknownKey,
            "unknown authorization claim \"\(key.prefix(64))\" (claim names are lowercase: vehicleid, tripid, deliveryvehicleid, taskid, taskids, trackingid)"
        )
    }
    static func wrongType(key: String, expected: String, found: String) -> Self {
        Self(.wrongType, "authorization claim \(key) must be \(expected), not \(found)")
    }
    static func invalidID(_ error: FleetEngineIDError) -> Self { Self(.invalidID, "authorization claim \(error)") }
    static func invalidTaskIDs(_ problem: String) -> Self {
        Self(.invalidTaskIDs, "authorization claim taskids \(problem)")
    }
}
