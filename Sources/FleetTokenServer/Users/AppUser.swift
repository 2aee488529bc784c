public import FleetAuthCore
import FleetAuthServerCore

extension AppUserRole {
    /// The grant kinds a user of this role may hold: vehicles for drivers, trips and tracking IDs for consumers,
    /// none for operators (who may have any token).
    public var grantKinds: [GrantKind] {
        switch self {
        case .driver: [.vehicle, .deliveryVehicle]
        case .consumer: [.trip, .tracking]
        default: []
        }
    }
}

/// A user of the app.
public struct AppUser: Sendable, Hashable {
    public var username: String
    public var role: AppUserRole

    public init(username: String, role: AppUserRole) {
        self.username = username
        self.role = role
    }

    /// Checks a username: 1–64 characters of `a-z 0-9 . _ @ -`, starting with a letter or digit.
    public static func validate(username: String) throws(GoogleAPIError) {
        let allowed = username.utf8.allSatisfy {
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x5F || $0 == 0x40
                || $0 == 0x2D
        }
        guard !username.isEmpty, username.utf8.count <= 64, allowed,
            let first = username.utf8.first, (first >= 0x61 && first <= 0x7A) || (first >= 0x30 && first <= 0x39)
        else {
            throw .invalidArgument(
                "username must be 1–64 characters of lowercase letters, digits, '.', '_', '@' or '-', starting with a letter or digit."
            )
        }
    }

    /// Checks a new password: 8 to 72 bytes (bcrypt reads no further than 72), no control characters (bcrypt reads
    /// a C string: it would stop at a NUL, so `password\u{0}junk` would be the password `password`).
    public static func validate(password: String) throws(GoogleAPIError) {
        guard password.utf8.count >= 8 else { throw .invalidArgument("password must be at least 8 characters.") }
        guard password.utf8.count <= 72 else { throw .invalidArgument("password must be at most 72 bytes.") }
        guard !hasControlCharacters(password) else {
            throw .invalidArgument("password must not contain control characters (such as NUL, tab or newline).")
        }
    }

    /// Whether `text` holds a control character (Unicode category Cc, NUL among them).
    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

/// What a grant gives access to.
public enum GrantKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// An on-demand vehicle: `GET /token/driver/{vehicleId}`.
    case vehicle
    /// A delivery vehicle: `GET /token/delivery_driver/{deliveryVehicleId}`.
    case deliveryVehicle = "delivery_vehicle"
    /// An on-demand trip: `GET /token/consumer/{tripId}`.
    case trip
    /// A shipment tracking ID: `GET /token/delivery_consumer/{trackingId}`.
    case tracking

    public var description: String { rawValue }
}

/// One resource a user may get tokens for.
public struct Grant: Sendable, Hashable, CustomStringConvertible {
    public var kind: GrantKind
    public var id: String

    public init(kind: GrantKind, id: String) {
        self.kind = kind
        self.id = id
    }

    public var description: String { "\(kind) \(id)" }
}
