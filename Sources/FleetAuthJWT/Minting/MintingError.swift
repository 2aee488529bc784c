public import FleetAuthCore

/// A minter that cannot be configured as asked.
public struct MintingError: CodedError {
    /// A stable code, safe for logs and metric labels. Codes are static members, so new ones can be added without
    /// breaking callers.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let invalidLifetime = Code("invalid_lifetime")
        public static let invalidBackdate = Code("invalid_backdate")
        public static let backdateExceedsLifetime = Code("backdate_exceeds_lifetime")
        public static let emptyAudience = Code("empty_audience")
        public static let signerNotLocal = Code("signer_not_local")
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

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
