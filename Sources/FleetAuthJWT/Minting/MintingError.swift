/// A minter that cannot be configured as asked. Equality compares the code only.
public struct MintingError: Error, Hashable, CustomStringConvertible {
    private enum Code: String {
        case invalidLifetime = "invalid_lifetime"
        case invalidBackdate = "invalid_backdate"
        case backdateExceedsLifetime = "backdate_exceeds_lifetime"
        case emptyAudience = "empty_audience"
        case signerNotLocal = "signer_not_local"
    }

    private let code: Code
    /// A human-readable explanation.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A stable short code.
    public var shortDescription: String { code.rawValue }
    public var description: String { message }
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static let invalidLifetime = Self(.invalidLifetime, "the token lifetime must be 1 to 3600 seconds")
    public static let invalidBackdate = Self(.invalidBackdate, "the backdate must be 0 to 600 seconds")
    public static let backdateExceedsLifetime = Self(
        .backdateExceedsLifetime,
        "the backdate must be shorter than the lifetime"
    )
    public static let emptyAudience = Self(.emptyAudience, "the audience must not be empty")
    public static let signerNotLocal = Self(.signerNotLocal, "synchronous minting needs a LocalKeySigner")

    static func invalidLifetime(_ value: Int64) -> Self {
        Self(.invalidLifetime, "the token lifetime is \(value) s; Fleet Engine accepts 1 to 3600 s")
    }
    static func invalidBackdate(_ value: Int64) -> Self {
        Self(.invalidBackdate, "the backdate is \(value) s; it must be 0 to 600 s (Fleet Engine allows 10 min of skew)")
    }
    static func backdateExceedsLifetime(_ backdate: Int64, _ lifetime: Int64) -> Self {
        Self(
            .backdateExceedsLifetime,
            "a backdate of \(backdate) s with a lifetime of \(lifetime) s mints tokens that have already expired"
        )
    }
}
