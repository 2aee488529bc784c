/// Why ``StrictJSONParser`` refused a document.
///
/// Equality compares the code only, so tests can match `JSONParseError.duplicateKey` without the offset.
public struct JSONParseError: Error, Hashable, CustomStringConvertible {
    private enum Code: String {
        case invalidUTF8 = "invalid_utf8"
        case byteOrderMark = "byte_order_mark"
        case unexpectedCharacter = "unexpected_character"
        case unexpectedEnd = "unexpected_end"
        case duplicateKey = "duplicate_key"
        case nestingTooDeep = "nesting_too_deep"
        case numberOutOfRange = "number_out_of_range"
        case invalidEscape = "invalid_escape"
        case loneSurrogate = "lone_surrogate"
        case controlCharacter = "control_character"
        case trailingData = "trailing_data"
        case notAnObject = "not_an_object"
    }

    private let code: Code
    /// What went wrong and where (a byte offset), never the document itself.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A stable short code, safe for logs and metric labels.
    public var shortDescription: String { code.rawValue }
    public var description: String { message }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

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
