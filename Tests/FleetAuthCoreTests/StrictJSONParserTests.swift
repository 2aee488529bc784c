import FleetAuthCore
import FleetAuthTesting
import Testing

@Suite("StrictJSONParser")
struct StrictJSONParserTests {
    let parser = StrictJSONParser()

    func parse(_ text: String) throws -> JSONValue { try parser.parse(Array(text.utf8)) }
    func parse(bytes: [UInt8]) throws -> JSONValue { try parser.parse(bytes) }

    @Test("reads every JSON type, keeps member order, and distinguishes integers")
    func readsValues() throws {
        let value = try parse(#" {"b": [1, -2, 3.5, 1e2, true, false, null], "a": "x\n\u00e9\ud83d\ude00/\""} "#)
        let object = try #require(value.objectValue)
        #expect(object.keys == ["b", "a"])
        #expect(object["b"] == [.integer(1), .integer(-2), .double(3.5), .double(100), true, false, .null])
        #expect(object["a"] == .string("x\né😀/\""))
    }

    @Test("integers keep 64-bit precision; larger integers become doubles")
    func integers() throws {
        #expect(try parse("9223372036854775807") == .integer(.max))
        #expect(try parse("-9223372036854775808") == .integer(.min))
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try parse("-0") == .integer(0))
    }

    @Test(
        "refuses non-RFC-8259 JSON (J1, J5)",
        arguments: [
            #"{"a":1,}"#, #"[1,]"#, #"{"a":1 "b":2}"#, "{'a':1}", #"{"a":NaN}"#, #"{"a":Infinity}"#,
            #"{"a":-Infinity}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":-}"#, #"{"a":1e}"#, #"{"a":+1}"#,
            #"{"a":1}x"#, #"{"a":1}{}"#, #"{"a":/*c*/1}"#, "{\"a\":1}//", #"{"a":tru}"#, #"{"a":"\x"}"#,
            #"{"a":"\u12"}"#, "{\"a\":\"\t\"}", "{\"a\":\"\u{0}\"}", "", " ", "{", #"{"a""#, #"{"a":}"#, "[",
            #"{a:1}"#, #"{"a":1e400}"#, #"{"a":-1e400}"#, #"{"a" : 0x10}"#,
        ]
    )
    func refusesInvalidJSON(_ text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
    }

    @Test("duplicate names are refused at any depth (J2)")
    func duplicates() {
        expectCode(JSONParseError.duplicateKey) { try parse(#"{"iss":"a","iss":"b"}"#) }
        expectCode(JSONParseError.duplicateKey) { try parse(#"{"x":{"vehicleid":"a","vehicleid":"b"}}"#) }
        expectCode(JSONParseError.duplicateKey) { try parse(#"[{"a":1},{"b":1,"b":1}]"#) }
        // An escaped spelling of the same name is the same name.
        expectCode(JSONParseError.duplicateKey) { try parse(#"{"iss":"a","\u0069ss":"b"}"#) }
        // Large objects use a set; the rule is the same.
        let many = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        expectCode(JSONParseError.duplicateKey) { try parse("{\(many),\"k7\":0}") }
        #expect(throws: Never.self) { try parse("{\(many)}") }
    }

    @Test("refuses invalid UTF-8, byte order marks and other encodings (J3)")
    func encodings() {
        expectCode(JSONParseError.invalidUTF8) {
            try parse(bytes: Array(#"{"a":""#.utf8) + [0xC2] + Array(#""}"#.utf8))
        }
        expectCode(JSONParseError.invalidUTF8) {
            try parse(bytes: Array(#"{"a":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8))
        }
        expectCode(JSONParseError.invalidUTF8) {
            try parse(bytes: Array(#"{"a":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8))
        }
        expectCode(JSONParseError.invalidUTF8) {
            try parse(bytes: Array(#"{"a":""#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8))
        }
        expectCode(JSONParseError.byteOrderMark) {
            try parse(bytes: [0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8))
        }
        let utf16: [UInt8] = [0xFF, 0xFE] + Array(#"{"a":1}"#.utf8).flatMap { [$0, 0] }
        #expect(throws: JSONParseError.self) { try parse(bytes: utf16) }
        let utf32: [UInt8] = [0xFF, 0xFE, 0, 0] + Array(#"{"a":1}"#.utf8).flatMap { [$0, 0, 0, 0] }
        #expect(throws: JSONParseError.self) { try parse(bytes: utf32) }
    }

    @Test("refuses lone surrogate escapes, in values and names (J4)")
    func surrogates() throws {
        expectCode(JSONParseError.loneSurrogate) { try parse(#"{"a":"\uD834"}"#) }
        expectCode(JSONParseError.loneSurrogate) { try parse(#"{"\uD800\uD800claim":1}"#) }
        expectCode(JSONParseError.loneSurrogate) { try parse(#"{"a":"\uDC00"}"#) }
        #expect(try parse(#""\uD834\uDD1E""#) == .string("𝄞"))
    }

    @Test("deep nesting is an error, not a crash; 10 levels work (J6)")
    func nesting() throws {
        let ten = String(repeating: #"{"a":"#, count: 10) + "1" + String(repeating: "}", count: 10)
        #expect(throws: Never.self) { try parse(ten) }
        let deep = String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        expectCode(JSONParseError.nestingTooDeep) { try parse(deep) }
        let arrays = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        expectCode(JSONParseError.nestingTooDeep) { try parse(arrays) }
    }

    @Test("serialization round-trips through the parser")
    func roundTrip() throws {
        let value: JSONValue = [
            "s": "q\"\\/\u{1}é", "i": -5, "d": 0.25, "b": true, "n": nil, "a": [1, "x"], "o": ["k": "v"],
        ]
        #expect(try parse(value.jsonText) == value)
        #expect(try parse(value.prettyText()) == value)
        #expect(JSONValue.string("https://x/").jsonText == #""https://x/""#)
    }

    @Test("strings are escaped exactly where JSON needs it, between runs copied whole")
    func escapes() throws {
        #expect(JSONValue.string("").jsonText == #""""#)
        #expect(JSONValue.string("\"a\\b\n\r\t\u{0}\u{1F}\u{7F}é😀").jsonText == #""\"a\\b\n\r\t\u0000\u001f\u007fé😀""#)
        // Random strings of plain text, characters that need escapes and multi-byte characters read back the same.
        var random = SystemRandomNumberGenerator()
        let pieces = ["abc", "\"", "\\", "\n", "\u{1}", "\u{7F}", "é", "😀", "/", " "]
        for _ in 0..<200 {
            let text = (0..<Int.random(in: 0..<20, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            let json = JSONValue.string(text).jsonText
            #expect(try parse("[\(json)]") == [.string(text)], "\(json)")
        }
    }
}
