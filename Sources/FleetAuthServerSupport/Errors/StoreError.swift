/// Why a store refused or failed an operation, in the store's own terms; each server turns it into its answer
/// (``GoogleAPIError/init(_:)`` for both of FleetAuth's).
///
/// | code | meaning | answered as |
/// |---|---|---|
/// | `not_found` | no such record | `NOT_FOUND` |
/// | `already_exists` | the key is taken | `ALREADY_EXISTS` |
/// | `conflict` | the record's state forbids the change (a vehicle with active trips) | `FAILED_PRECONDITION` |
/// | `unavailable` | the database cannot be reached | `UNAVAILABLE` |
/// | `corrupted` | a stored record cannot be read back | `INTERNAL` |
///
/// Equality compares the code only.
public struct StoreError: Error, Hashable, CustomStringConvertible {
    enum Kind: String, Sendable {
        case notFound = "not_found"
        case alreadyExists = "already_exists"
        case conflict
        case unavailable
        case corrupted
    }

    let kind: Kind
    /// What happened, naming the record; never contains a secret.
    public let message: String

    private init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The stable short code, such as `not_found`.
    public var code: String { kind.rawValue }
    /// Whether trying again later may succeed.
    public var isTransient: Bool { kind == .unavailable }
    public var description: String { "\(kind.rawValue): \(message)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// No such record.
    public static func notFound(_ message: String) -> Self { Self(.notFound, message) }
    /// The record's key is taken.
    public static func alreadyExists(_ message: String) -> Self { Self(.alreadyExists, message) }
    /// The record's state forbids the change.
    public static func conflict(_ message: String) -> Self { Self(.conflict, message) }
    /// The database cannot be reached.
    public static func unavailable(_ message: String) -> Self { Self(.unavailable, message) }
    /// A stored record cannot be read back.
    public static func corrupted(_ message: String) -> Self { Self(.corrupted, message) }
}
