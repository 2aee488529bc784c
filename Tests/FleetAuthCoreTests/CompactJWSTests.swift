import FleetAuthCore
import FleetAuthTesting
import Testing

private let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
private let payload = Base64URL.encode(Array(#"{"iss":"a@b"}"#.utf8))
private let signature = Base64URL.encode([1, 2, 3])

@Suite("CompactJWS")
struct CompactJWSTests {
    static let valid = "\(header).\(payload).\(signature)"

    @Test("decodes header, payload, signature and signing input")
    func decodes() throws {
        let jws = try CompactJWS(Self.valid)
        #expect(jws.algorithm == "RS256")
        #expect(jws.header["typ"] == "JWT")
        #expect(try jws.payloadObject()["iss"] == "a@b")
        #expect(jws.signature == [1, 2, 3])
        #expect(jws.signingInput == "\(header).\(payload)")
        jws.withSigningInput { #expect(Array($0) == Array("\(header).\(payload)".utf8)) }
    }

    @Test(
        "refuses malformed compact serializations (F1–F4)",
        arguments: [
            ("", JWSDecodingError.empty),
            ("a.b", .wrongSegmentCount),
            ("\(header).\(payload).\(signature).x", .wrongSegmentCount),
            ("\(header).\(payload).\(signature).", .wrongSegmentCount),
            ("\(header).\(payload).\(signature).x.y", .wrongSegmentCount),
            ("\(header).\(payload).", .emptySegment),
            (".\(payload).\(signature)", .emptySegment),
            ("\(header)..\(signature)", .emptySegment),
            (#"{"payload":"x","signatures":[]}"#, .invalidCharacter),
            ("\(header).\(payload).\(signature)=", .invalidCharacter),
            ("\(header).\(payload) .\(signature)", .invalidCharacter),
            ("\(header).\(payload).\(signature)\n", .invalidCharacter),
            ("\(header).\(payload)+.\(signature)", .invalidCharacter),
            ("\(header).\(payload)/.\(signature)", .invalidCharacter),
            ("\(header).\(payload)#.\(signature)", .invalidCharacter),
            ("\(header).\(payload)?.\(signature)", .invalidCharacter),
            ("\(header).\(payload)B.\(signature)", .invalidBase64URL),
        ]
    )
    func refuses(_ token: String, _ expected: JWSDecodingError) {
        expectCode(expected) { try CompactJWS(token) }
    }

    @Test("non-canonical base64url in any segment is refused (F5)")
    func nonCanonical() {
        // "AQID" encodes [1,2,3]; "AQI" encodes [1,2] and "AQJ" would decode to the same bytes with unused bits set.
        expectCode(JWSDecodingError.invalidBase64URL) { try CompactJWS("\(header).\(payload).AQJ") }
        #expect(throws: Never.self) { try CompactJWS("\(header).\(payload).AQI") }
    }

    @Test("the size limit is enforced before decoding (D1)")
    func sizeLimit() {
        let big = Self.valid + String(repeating: "A", count: 9000)
        expectCode(JWSDecodingError.tooLarge) { try CompactJWS(big) }
        expectCode(JWSDecodingError.tooLarge) { try CompactJWS(Self.valid, maximumLength: 10) }
    }

    @Test("the header must be a strict JSON object")
    func headerMustBeAnObject() {
        for text in [#"["RS256"]"#, #""x""#, "null", #"{"alg":"RS256","alg":"none"}"#, "\u{FEFF}{}"] {
            let token = "\(Base64URL.encode(Array(text.utf8))).\(payload).\(signature)"
            expectCode(JWSDecodingError.invalidHeader) { try CompactJWS(token) }
        }
    }
}
