/// The code of a FleetAuth error: a stable string, safe for logs and metric labels, spelled as a struct with static
/// members (so a new code does not break a caller's `switch`), as grpc-swift's `RPCError.Code` and postgres-nio's
/// `PSQLError.Code` are.
///
/// Every FleetAuth error has the same shape: a public `code` of its own `Code` type conforming to this protocol, a
/// `message` for people, and equality over all of its fields. Compare codes, not errors:
///
/// ```swift
/// let error = #expect(throws: TokenVerificationError.self) { try verifier.verify(token) }
/// #expect(error?.code == .expired)
/// ```
public protocol ErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// The code's stable text, such as `expired` or `PERMISSION_DENIED`.
    var rawValue: String { get }
}

extension ErrorCode {
    public var description: String { rawValue }
}

/// The one shape of FleetAuth's errors: a stable ``code``, a ``message`` for people (never a token, a password or
/// key material), and equality over every field.
public protocol CodedError: Error, Hashable, CustomStringConvertible {
    /// The code type: a struct of static members.
    associatedtype Code: ErrorCode
    /// What went wrong, as a stable code.
    var code: Code { get }
    /// What went wrong, for people.
    var message: String { get }
}

extension CodedError {
    /// The ``message``: what a log line, or `"\(error)"`, shows.
    public var description: String { message }
}
