public import FleetAuthCore

/// Why a store refused or failed an operation, in the store's own terms; each server turns it into its answer
/// (``GoogleAPIError/init(_:)`` for both of FleetAuth's).
///
/// | code | meaning | answered as |
/// |---|---|---|
/// | `not_found` | no such record | `NOT_FOUND` |
/// | `already_exists` | the key is taken | `ALREADY_EXISTS` |
/// | `conflict` | the record's state forbids the change (a vehicle with active trips) | `FAILED_PRECONDITION` |
/// | `unavailable` | the database cannot be reached | `UNAVAILABLE` |
/// | `deadline_exceeded` | the database did not answer in time: a change may still be applied | `DEADLINE_EXCEEDED` |
/// | `corrupted` | a stored record cannot be read back | `INTERNAL` |
public struct StoreError: CodedError {
    /// A stable code, safe for logs and metric labels.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let notFound = Code("not_found")
        public static let alreadyExists = Code("already_exists")
        public static let conflict = Code("conflict")
        public static let unavailable = Code("unavailable")
        public static let deadlineExceeded = Code("deadline_exceeded")
        public static let corrupted = Code("corrupted")
    }

    /// What went wrong.
    public let code: Code
    /// What happened, naming the record; never contains a secret.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether trying again later may succeed.
    public var isTransient: Bool { code == .unavailable || code == .deadlineExceeded }
    public var description: String { "\(code.rawValue): \(message)" }

    /// No such record.
    public static func notFound(_ message: String) -> Self { Self(.notFound, message) }
    /// The record's key is taken.
    public static func alreadyExists(_ message: String) -> Self { Self(.alreadyExists, message) }
    /// The record's state forbids the change.
    public static func conflict(_ message: String) -> Self { Self(.conflict, message) }
    /// The database cannot be reached.
    public static func unavailable(_ message: String) -> Self { Self(.unavailable, message) }
    /// The database did not answer in time; what the call asked for may still be applied.
    public static func deadlineExceeded(_ message: String) -> Self { Self(.deadlineExceeded, message) }
    /// A stored record cannot be read back.
    public static func corrupted(_ message: String) -> Self { Self(.corrupted, message) }
}
