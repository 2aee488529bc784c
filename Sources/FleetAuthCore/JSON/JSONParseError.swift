/// Why ``StrictJSONParser`` refused a document.
public struct JSONParseError: CodedError {
    /// A stable code, safe for logs and metric labels. Codes are static members, so new ones can be added without
    /// breaking callers.
    public struct Code: ErrorCode {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let invalidUTF8 = Code("invalid_utf8")
        public static let byteOrderMark = Code("byte_order_mark")
        public static let unexpectedCharacter = Code("unexpected_character")
        public static let unexpectedEnd = Code("unexpected_end")
        public static let duplicateKey = Code("duplicate_key")
        public static let nestingTooDeep = Code("nesting_too_deep")
        public static let numberOutOfRange = Code("number_out_of_range")
        public static let invalidEscape = Code("invalid_escape")
        public static let loneSurrogate = Code("lone_surrogate")
        public static let controlCharacter = Code("control_character")
        public static let trailingData = Code("trailing_data")
        public static let notAnObject = Code("not_an_object")
    }

    /// What went wrong.
    public let code: Code
    /// What went wrong and where (a byte offset), never the document itself.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static let invalidUTF8 = Self(.invalidUTF8, "the text is not valid UTF-8")
    public static let byteOrderMark = Self(.byteOrderMark, "the text starts with a byte order mark")
    public static let unexpectedCharacter = Self(.unexpectedCharacter, "unexpected character")
    public static let unexpectedEnd = Self(.unexpectedEnd, "unexpected end of the text")
    public static let duplicateKey = Self(.duplicateKey, "an object has the same member name twice")
    public static let nestingTooDeep = Self(.nestingTooDeep, "objects and arrays are nested too deeply")
    public static let numberOutOfRange = Self(.numberOutOfRange, "a number is out of range")
    public static let invalidEscape = Self(.invalidEscape, "a string has an invalid escape sequence")
    public static let loneSurrogate = Self(.loneSurrogate, "a string has an unpaired UTF-16 surrogate escape")
    public static let controlCharacter = Self(.controlCharacter, "a string has an unescaped control character")
    public static let trailingData = Self(.trailingData, "there is data after the JSON value")
    public static let notAnObject = Self(.notAnObject, "the JSON value is not an object")

    static func invalidUTF8(at offset: Int) -> Self { Self(.invalidUTF8, "invalid UTF-8 at byte \(offset)") }
    static func unexpectedCharacter(at offset: Int) -> Self {
        Self(.unexpectedCharacter, "unexpected character at byte \(offset)")
    }
    static func duplicateKey(_ key: String) -> Self {
        Self(.duplicateKey, "the member name \"\(key.prefix(64))\" appears twice in one object")
    }
    static func nestingTooDeep(limit: Int) -> Self {
        Self(.nestingTooDeep, "objects and arrays are nested more than \(limit) levels deep")
    }
    static func numberOutOfRange(at offset: Int) -> Self {
        Self(.numberOutOfRange, "the number at byte \(offset) is out of range")
    }
    static func invalidEscape(at offset: Int) -> Self {
        Self(.invalidEscape, "invalid escape sequence at byte \(offset)")
    }
    static func loneSurrogate(at offset: Int) -> Self {
        Self(.loneSurrogate, "unpaired UTF-16 surrogate escape at byte \(offset)")
    }
    static func controlCharacter(at offset: Int) -> Self {
        Self(.controlCharacter, "unescaped control character in a string at byte \(offset)")
    }
    static func trailingData(at offset: Int) -> Self {
        Self(.trailingData, "data after the JSON value at byte \(offset)")
    }
    static func notAnObject(_ value: JSONValue) -> Self {
        Self(.notAnObject, "expected a JSON object, found \(value.typeName == "object" ? "an" : "a") \(value.typeName)")
    }
}
