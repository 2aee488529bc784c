/// Why ``CompactJWS`` could not decode a token. Messages never contain the token.
public struct JWSDecodingError: CodedError {
    /// A stable code, safe for logs and metric labels. Codes are static members, so new ones can be added without
    /// breaking callers.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let empty = Code("empty")
        public static let tooLarge = Code("token_too_large")
        public static let invalidCharacter = Code("invalid_character")
        public static let wrongSegmentCount = Code("wrong_segment_count")
        public static let emptySegment = Code("empty_segment")
        public static let invalidBase64URL = Code("invalid_base64url")
        public static let invalidHeader = Code("invalid_header")
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation.
    public let message: String
    /// For an invalid header: what the JSON parser refused.
    public let jsonError: JSONParseError?

    private init(_ code: Code, _ message: String, jsonError: JSONParseError? = nil) {
        self.code = code
        self.message = message
        self.jsonError = jsonError
    }

    public static let empty = Self(.empty, "the token is empty")
    public static let tooLarge = Self(.tooLarge, "the token is too large")
    public static let invalidCharacter = Self(.invalidCharacter, "the token has a character outside base64url and '.'")
    public static let wrongSegmentCount = Self(.wrongSegmentCount, "a compact JWS has exactly three segments")
    public static let emptySegment = Self(.emptySegment, "a segment of the token is empty")
    public static let invalidBase64URL = Self(.invalidBase64URL, "a segment is not canonical base64url")
    public static let invalidHeader = Self(.invalidHeader, "the header is not a JSON object")

    static func tooLarge(_ count: Int, limit: Int) -> Self {
        Self(.tooLarge, "the token is \(count) bytes; the limit is \(limit)")
    }
    static func invalidCharacter(at offset: Int) -> Self {
        Self(.invalidCharacter, "the token has a character outside base64url and '.' at byte \(offset)")
    }
    static func wrongSegmentCount(_ count: Int) -> Self {
        Self(.wrongSegmentCount, "the token has \(count) segments; a compact JWS has exactly three")
    }
    static func emptySegment(_ name: String) -> Self { Self(.emptySegment, "the \(name) segment is empty") }
    static func invalidBase64URL(_ name: String) -> Self {
        Self(.invalidBase64URL, "the \(name) segment is not canonical unpadded base64url")
    }
    static func invalidHeader(_ error: JSONParseError) -> Self {
        Self(.invalidHeader, "the header is not a strict JSON object: \(error.message)", jsonError: error)
    }
}
