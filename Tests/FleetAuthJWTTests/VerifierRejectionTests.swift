import Crypto
import CryptoExtras
import FleetAuthCore
import FleetAuthJWT
import FleetAuthTesting
import Foundation
import Testing

/// One rule of FleetAuthJWT's *Verification rules* article (F, J, H, S and C rows, and D1).
struct Row: Sendable, CustomTestStringConvertible {
    let id: String
    let token: String
    /// `nil`: the token must verify.
    let expected: TokenVerificationError?
    var testDescription: String { "\(id) → \(expected?.code.rawValue ?? "valid")" }

    init(_ id: String, _ token: String, _ expected: TokenVerificationError?) {
        self.id = id
        self.token = token
        self.expected = expected
    }
}

private typealias F = Fixtures
private let now = Fixtures.now
private let good = F.forge()
private let goodParts = good.split(separator: ".").map(String.init)
private let signature = Base64URL.decode(goodParts[2])!

/// The same segment with the lowest unused bit of its last character set: same bytes to a lenient decoder.
private func withUnusedBitSet(_ segment: String) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    let value = alphabet.firstIndex(of: segment.last!)!
    precondition(segment.count % 4 != 0 && value & 1 == 0)
    return String(segment.dropLast()) + String(alphabet[value | 1])
}

private func json(_ header: String, _ payload: String = F.claims()) -> String {
    F.forge(header: header, payload: payload)
}
private func claims(_ payload: String) -> String { F.forge(payload: payload) }
private func hmac(_ header: String, key: [UInt8]) -> String {
    let input = F.b64(header) + "." + F.b64(F.claims())
    let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: key))
    return input + "." + Base64URL.encode(Array(mac))
}

@Suite("Verifier: every rule of the Verification rules article")
struct VerifierRejectionTests {
    static let formatRows: [Row] = [
        Row("F1 empty", "", .malformedToken),
        Row("F1 two segments", "\(goodParts[0]).\(goodParts[1])", .malformedToken),
        Row("F1 four segments", good + ".x", .malformedToken),
        Row("F1 trailing dot", good + ".", .malformedToken),
        Row("F1 JWE five segments", "\(goodParts[0]).AAAA.AAAA.AAAA.AAAA", .malformedToken),
        Row("F2 signature stripped", "\(goodParts[0]).\(goodParts[1]).", .malformedToken),
        Row("F2 empty header", ".\(goodParts[1]).\(goodParts[2])", .malformedToken),
        Row("F2 empty payload", "\(goodParts[0])..\(goodParts[2])", .malformedToken),
        Row(
            "F3 JSON serialization",
            #"{"payload":"\#(goodParts[1])","signatures":[{"protected":"\#(goodParts[0])","signature":"\#(goodParts[2])"}]}"#,
            .malformedToken
        ),
        Row("F3 space", good.replacingOccurrences(of: ".", with: ". "), .malformedToken),
        Row("F4 padding", "\(goodParts[0])==.\(goodParts[1]).\(goodParts[2])", .malformedToken),
        Row(
            "F4 plus",
            good.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "+",
            .malformedToken
        ),
        Row("F4 newline", "\(goodParts[0]).\(goodParts[1])\n.\(goodParts[2])", .malformedToken),
        Row("F4 hash", "\(goodParts[0]).\(goodParts[1])#.\(goodParts[2])", .malformedToken),
        Row(
            "F5 length 1 mod 4",
            "\(goodParts[0]).\(goodParts[1]).\(goodParts[2] + String(repeating: "A", count: (5 - goodParts[2].count % 4) % 4))",
            .invalidBase64URL
        ),
        Row(
            "F5 unused bits set in signature",
            "\(goodParts[0]).\(goodParts[1]).\(withUnusedBitSet(goodParts[2]))",
            .invalidBase64URL
        ),
        Row(
            "F6 '?' inserted in header",
            "\(goodParts[0].prefix(10))?\(goodParts[0].dropFirst(10)).\(goodParts[1]).\(goodParts[2])",
            .malformedToken
        ),
        Row("F7 255-byte signature", F.withSignature(Array(signature.dropLast())), .invalidSignature),
        Row("F7 257-byte signature", F.withSignature(signature + [0]), .invalidSignature),
        Row("F7 258-byte signature", F.withSignature([0, 0] + signature), .invalidSignature),
        Row("F7 zero signature", F.withSignature([UInt8](repeating: 0, count: 256)), .invalidSignature),
        Row(
            "F7 signature = n",
            F.withSignature(Base64URL.decode(F.driverKey.verificationKey.jwk.modulus)!),
            .invalidSignature
        ),
        Row(
            "D1 oversized token",
            F.forge(payload: F.claims(extra: #","pad":"\#(String(repeating: "x", count: 7000))""#)),
            .tokenTooLarge
        ),
        Row("D1 1 MB token", String(repeating: "A", count: 1_000_000), .tokenTooLarge),
    ]

    static let jsonRows: [Row] = [
        Row("J1 header array", json(#"["RS256"]"#), .invalidJSON),
        Row("J1 header string", json(#""RS256""#), .invalidJSON),
        Row("J1 header null", json("null"), .invalidJSON),
        Row("J1 payload array", json(F.header(), "[1]"), .invalidJSON),
        Row("J1 payload number", json(F.header(), "1800000000"), .invalidJSON),
        Row("J1 payload null", json(F.header(), "null"), .invalidJSON),
        Row(
            "J1 payload random bytes",
            F.forge(rawHeader: Array(F.header().utf8), rawPayload: [0x9F, 0x00, 0xFF, 0x13]),
            .invalidJSON
        ),
        Row("J2 duplicate iss", claims(F.claims(extra: #","iss":"\#(F.issuer)""#)), .duplicateJSONKey),
        Row("J2 duplicate alg", json(#"{"alg":"RS256","alg":"none","kid":"\#(F.kid)"}"#), .duplicateJSONKey),
        Row(
            "J2 duplicate aud",
            claims(F.claims(extra: #","aud":"https://fleetengine.googleapis.com/""#)),
            .duplicateJSONKey
        ),
        Row(
            "J2 duplicate inside authorization",
            claims(F.claims(authorization: #"{"vehicleid":"v1","vehicleid":"v2"}"#)),
            .duplicateJSONKey
        ),
        Row(
            "J3 invalid UTF-8",
            F.forge(
                rawHeader: Array(F.header().utf8),
                rawPayload: Array(F.claims(extra: #","x":""#).utf8) + [0xC2] + Array(#""}"#.utf8).dropFirst(0)
            ),
            .invalidJSON
        ),
        Row(
            "J3 UTF-8 BOM on payload",
            F.forge(rawHeader: Array(F.header().utf8), rawPayload: [0xEF, 0xBB, 0xBF] + Array(F.claims().utf8)),
            .invalidJSON
        ),
        Row(
            "J3 UTF-8 BOM on header",
            F.forge(rawHeader: [0xEF, 0xBB, 0xBF] + Array(F.header().utf8), rawPayload: Array(F.claims().utf8)),
            .invalidJSON
        ),
        Row(
            "J3 UTF-16 payload",
            F.forge(
                rawHeader: Array(F.header().utf8),
                rawPayload: [0xFF, 0xFE] + F.claims().utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            ),
            .invalidJSON
        ),
        Row("J4 lone surrogate value", claims(F.claims(extra: #","x":"\uD834""#)), .invalidJSON),
        Row("J4 lone surrogate names", claims(F.claims(extra: #","\uD800\uD800claim":1"#)), .invalidJSON),
        Row("J5 trailing comma", claims(F.claims(extra: ",")), .invalidJSON),
        Row("J5 comment", json(#"{"alg":"RS256",/* c */"kid":"\#(F.kid)"}"#), .invalidJSON),
        Row("J5 NaN", claims(F.claims(exp: "NaN")), .invalidJSON),
        Row("J5 Infinity exp", claims(F.claims(exp: "Infinity")), .invalidJSON),
        Row("J5 1e400", claims(F.claims(extra: #","x":1e400"#)), .invalidJSON),
        Row("J5 trailing garbage", claims(F.claims() + "x"), .invalidJSON),
        Row(
            "J6 deep nesting",
            claims(
                F.claims(extra: #","x":"# + String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000))
            ),
            .invalidJSON
        ),
        Row(
            "J6 ten levels still work",
            claims(
                F.claims(
                    extra: #","x":"# + String(repeating: #"{"a":"#, count: 10) + "1" + String(repeating: "}", count: 10)
                )
            ),
            nil
        ),
        Row("J7 NUL in iss", claims(F.claims(iss: F.issuer + #"\u0000"#, sub: F.issuer + #"\u0000"#)), .invalidIssuer),
        Row("J7 control char in kid", json(F.header(kid: #"\#(F.kid)\u0007"#)), .invalidKeyID),
        Row(
            "J7 zero-width char in vehicleid",
            claims(F.claims(authorization: #"{"vehicleid":"v\u200B1"}"#)),
            .invalidAuthorization
        ),
    ]

    static let headerRows: [Row] = [
        Row("H1 alg none", json(F.header(alg: "none")), .unsupportedAlgorithm),
        Row("H1 alg None", json(F.header(alg: "None")), .unsupportedAlgorithm),
        Row("H1 alg NONE", json(F.header(alg: "NONE")), .unsupportedAlgorithm),
        Row("H1 alg nOnE", json(F.header(alg: "nOnE")), .unsupportedAlgorithm),
        Row("H1 alg none unsigned", F.b64(F.header(alg: "none")) + "." + F.b64(F.claims()) + ".", .malformedToken),
        Row("H2 alg missing", json(#"{"typ":"JWT","kid":"\#(F.kid)"}"#), .unsupportedAlgorithm),
        Row("H2 alg null", json(#"{"alg":null,"kid":"\#(F.kid)"}"#), .unsupportedAlgorithm),
        Row("H2 alg number", json(#"{"alg":256,"kid":"\#(F.kid)"}"#), .unsupportedAlgorithm),
        Row("H2 alg array", json(#"{"alg":["RS256"],"kid":"\#(F.kid)"}"#), .unsupportedAlgorithm),
        Row("H2 alg rs256", json(F.header(alg: "rs256")), .unsupportedAlgorithm),
        Row("H2 alg 'RS256 '", json(F.header(alg: "RS256 ")), .unsupportedAlgorithm),
        Row("H2 alg RS512", json(F.header(alg: "RS512")), .unsupportedAlgorithm),
        Row("H2 alg PS256", json(F.header(alg: "PS256")), .unsupportedAlgorithm),
        Row("H2 alg ES256", json(F.header(alg: "ES256")), .unsupportedAlgorithm),
        Row("H2 alg EdDSA", json(F.header(alg: "EdDSA")), .unsupportedAlgorithm),
        Row("H2 alg unknown", json(F.header(alg: "XYZ")), .unsupportedAlgorithm),
        Row(
            "H3 HS256 keyed with the public key PEM",
            hmac(F.header(alg: "HS256"), key: Array(F.driverKey.verificationKey.pemRepresentation.utf8)),
            .unsupportedAlgorithm
        ),
        Row(
            "H3 HS256 keyed with the JWK",
            hmac(F.header(alg: "HS256"), key: F.driverKey.verificationKey.jwk.jsonObject.jsonBytes),
            .unsupportedAlgorithm
        ),
        Row(
            "H3 HS256 keyed with the modulus",
            hmac(F.header(alg: "HS256"), key: Base64URL.decode(F.driverKey.verificationKey.jwk.modulus)!),
            .unsupportedAlgorithm
        ),
        Row(
            "H4 PS256 signature under an RS256 header",
            {
                let input = F.b64(F.header()) + "." + F.b64(F.claims())
                let pss = try! F.rsaKey(F.driverKey).signature(for: SHA256.hash(data: Array(input.utf8)), padding: .PSS)
                return input + "." + Base64URL.encode(pss.rawRepresentation)
            }(),
            .invalidSignature
        ),
        Row("H4 RS256 signature under a PS256 header", json(F.header(alg: "PS256")), .unsupportedAlgorithm),
        Row("H5 kid missing is tried against the issuer's keys", json(F.header(kid: nil)), nil),
        Row("H5 kid unknown", json(F.header(kid: "0123456789abcdef")), .unknownKeyID),
        Row("H5 kid empty", json(F.header(kid: "")), .invalidKeyID),
        Row("H5 kid number", json(#"{"alg":"RS256","kid":5}"#), .invalidKeyID),
        Row("H5 kid null", json(#"{"alg":"RS256","kid":null}"#), .invalidKeyID),
        Row("H5 kid 300 characters", json(F.header(kid: String(repeating: "a", count: 300))), .invalidKeyID),
        Row("H5 kid path traversal", json(F.header(kid: "../../../../dev/null")), .unknownKeyID),
        Row("H5 kid /dev/null", json(F.header(kid: "/dev/null")), .unknownKeyID),
        Row("H5 kid SQL injection", json(F.header(kid: "x' UNION SELECT '1';--")), .invalidKeyID),
        Row("H5 kid shell", json(F.header(kid: "|sleep 10")), .invalidKeyID),
        Row("H5 kid NUL", json(F.header(kid: #"a\u0000b"#)), .invalidKeyID),
        Row("H6 kid of another issuer's key", json(F.header(kid: F.consumerKey.privateKeyID)), .unknownKeyID),
        Row(
            "H7 jwk embedded",
            json(#"{"alg":"RS256","kid":"\#(F.kid)","jwk":\#(F.strangerKey.verificationKey.jwk.jsonObject.jsonText)}"#),
            .untrustedKeyReference
        ),
        Row(
            "H7 jwk embedded, signed by that key",
            F.forge(
                header: #"{"alg":"RS256","jwk":\#(F.strangerKey.verificationKey.jwk.jsonObject.jsonText)}"#,
                key: F.strangerKey
            ),
            .untrustedKeyReference
        ),
        Row(
            "H7 jku",
            json(#"{"alg":"RS256","kid":"\#(F.kid)","jku":"http://127.0.0.1/keys"}"#),
            .untrustedKeyReference
        ),
        Row(
            "H7 x5u",
            json(#"{"alg":"RS256","kid":"\#(F.kid)","x5u":"http://127.0.0.1/cert"}"#),
            .untrustedKeyReference
        ),
        Row("H7 x5c", json(#"{"alg":"RS256","kid":"\#(F.kid)","x5c":["MIIB"]}"#), .untrustedKeyReference),
        Row("H7 x5t", json(#"{"alg":"RS256","kid":"\#(F.kid)","x5t":"AAAA"}"#), .untrustedKeyReference),
        Row("H7 x5t#S256", json(#"{"alg":"RS256","kid":"\#(F.kid)","x5t#S256":"AAAA"}"#), .untrustedKeyReference),
        Row("H8 crit empty", json(#"{"alg":"RS256","kid":"\#(F.kid)","crit":[]}"#), .criticalHeader),
        Row("H8 crit unknown", json(#"{"alg":"RS256","kid":"\#(F.kid)","crit":["foo"],"foo":1}"#), .criticalHeader),
        Row("H8 crit b64", json(#"{"alg":"RS256","kid":"\#(F.kid)","crit":["b64"],"b64":false}"#), .criticalHeader),
        Row("H8 crit standard param", json(#"{"alg":"RS256","kid":"\#(F.kid)","crit":["exp"]}"#), .criticalHeader),
        Row("H8 crit not a list", json(#"{"alg":"RS256","kid":"\#(F.kid)","crit":"exp"}"#), .criticalHeader),
        Row("H9 typ at+jwt", json(#"{"alg":"RS256","typ":"at+jwt","kid":"\#(F.kid)"}"#), .invalidType),
        Row("H9 typ JWE", json(#"{"alg":"RS256","typ":"JWE","kid":"\#(F.kid)"}"#), .invalidType),
        Row("H9 typ number", json(#"{"alg":"RS256","typ":1,"kid":"\#(F.kid)"}"#), .invalidType),
        Row("H9 typ jwt lowercase accepted", json(#"{"alg":"RS256","typ":"jwt","kid":"\#(F.kid)"}"#), nil),
        Row("H9 no typ accepted", json(#"{"alg":"RS256","kid":"\#(F.kid)"}"#), nil),
        Row("H9 cty JWT", json(#"{"alg":"RS256","typ":"JWT","cty":"JWT","kid":"\#(F.kid)"}"#), .forbiddenHeader),
        Row("H10 zip", json(#"{"alg":"RS256","kid":"\#(F.kid)","zip":"DEF"}"#), .forbiddenHeader),
        Row("H10 enc", json(#"{"alg":"RS256","kid":"\#(F.kid)","enc":"A256GCM"}"#), .forbiddenHeader),
        Row("H10 p2c", json(#"{"alg":"RS256","kid":"\#(F.kid)","p2c":1000}"#), .forbiddenHeader),
        Row("H10 epk", json(#"{"alg":"RS256","kid":"\#(F.kid)","epk":{}}"#), .forbiddenHeader),
        Row(
            "unknown header parameters are ignored (RFC 7515 §4)",
            json(#"{"alg":"RS256","kid":"\#(F.kid)","x-trace":"1"}"#),
            nil
        ),
    ]

    static let signatureRows: [Row] = {
        var flippedSignature = signature
        flippedSignature[100] ^= 0x01
        let other = F.forge(payload: F.claims(authorization: #"{"vehicleid":"v2"}"#)).split(separator: ".")
        let otherHeader = F.forge(header: #"{"alg":"RS256","kid":"\#(F.kid)","typ":"JWT"}"#).split(separator: ".")
        return [
            Row("S1 flipped signature bit", F.withSignature(flippedSignature), .invalidSignature),
            Row("S1 payload swapped", "\(goodParts[0]).\(other[1]).\(goodParts[2])", .invalidSignature),
            Row("S1 header swapped", "\(otherHeader[0]).\(goodParts[1]).\(goodParts[2])", .invalidSignature),
            Row("S1 signed by an untrusted key under a trusted kid", F.forge(key: F.strangerKey), .invalidSignature),
            Row("S1 signed by another trusted account's key", F.forge(key: F.consumerKey), .invalidSignature),
        ]
    }()

    static let claimRows: [Row] = [
        Row(
            "C1 exp missing",
            claims(
                #"{"iss":"\#(F.issuer)","sub":"\#(F.issuer)","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"authorization":{"vehicleid":"v1"}}"#
            ),
            .invalidExpiration
        ),
        Row("C1 exp string", claims(F.claims(exp: #""\#(now + 3600)""#)), .invalidExpiration),
        Row("C1 exp bool", claims(F.claims(exp: "true")), .invalidExpiration),
        Row("C1 exp array", claims(F.claims(exp: "[\(now + 3600)]")), .invalidExpiration),
        Row("C1 exp null", claims(F.claims(exp: "null")), .invalidExpiration),
        Row("C1 exp 1e30", claims(F.claims(exp: "1e30")), .invalidExpiration),
        Row("C1 exp beyond year 9999", claims(F.claims(exp: "253402300800")), .invalidExpiration),
        Row("C1 exp negative", claims(F.claims(exp: "-1")), .invalidExpiration),
        Row("C2 now == exp is expired", claims(F.claims(iat: "\(now - 3600)", exp: "\(now)")), .expired),
        Row("C2 expired long ago", claims(F.claims(iat: "\(now - 7200)", exp: "\(now - 3600)")), .expired),
        Row("C3 now == exp - 1 is valid", claims(F.claims(iat: "\(now - 3599)", exp: "\(now + 1)")), nil),
        Row("C3 exp just inside the leeway", claims(F.claims(iat: "\(now + 60)", exp: "\(now + 3660)")), nil),
        Row("C4 exp past the leeway", claims(F.claims(iat: "\(now + 61)", exp: "\(now + 3661)")), .expirationTooFar),
        Row("C4 exp - iat > 3600", claims(F.claims(iat: "\(now - 1)", exp: "\(now + 3600)")), .invalidLifetime),
        Row("C4 exp before iat", claims(F.claims(iat: "\(now + 200)", exp: "\(now + 100)")), .invalidLifetime),
        Row(
            "C5 iat missing",
            claims(
                #"{"iss":"\#(F.issuer)","sub":"\#(F.issuer)","aud":"https://fleetengine.googleapis.com/","exp":\#(now + 3600),"authorization":{"vehicleid":"v1"}}"#
            ),
            .invalidIssuedAt
        ),
        Row("C5 iat string", claims(F.claims(iat: #""now""#)), .invalidIssuedAt),
        Row("C5 iat 601 s in the future", claims(F.claims(iat: "\(now + 601)", exp: "\(now + 700)")), .issuedInFuture),
        Row("C5 iat 600 s in the future is skew", claims(F.claims(iat: "\(now + 600)", exp: "\(now + 700)")), nil),
        Row(
            "C5 iat 50 min old is fine (the token's whole hour)",
            claims(F.claims(iat: "\(now - 3000)", exp: "\(now + 600)")),
            nil
        ),
        Row(
            "C5 iat absurdly old with valid exp",
            claims(F.claims(iat: "\(now - 100_000)", exp: "\(now + 100)")),
            .invalidLifetime
        ),
        Row("C6 nbf in the future", claims(F.claims(extra: #","nbf":\#(now + 601)"#)), .notYetValid),
        Row("C6 nbf == now", claims(F.claims(extra: #","nbf":\#(now)"#)), nil),
        Row("C6 nbf string", claims(F.claims(extra: #","nbf":"soon""#)), .invalidNotBefore),
        Row(
            "C7 aud missing",
            claims(
                #"{"iss":"\#(F.issuer)","sub":"\#(F.issuer)","iat":\#(now),"exp":\#(now + 3600),"authorization":{"vehicleid":"v1"}}"#
            ),
            .invalidAudience
        ),
        Row("C7 aud wrong", claims(F.claims(aud: #""https://example.com/""#)), .invalidAudience),
        Row(
            "C7 aud different case",
            claims(F.claims(aud: #""https://FleetEngine.googleapis.com/""#)),
            .invalidAudience
        ),
        Row(
            "C7 aud without trailing slash",
            claims(F.claims(aud: #""https://fleetengine.googleapis.com""#)),
            .invalidAudience
        ),
        Row("C7 aud empty array", claims(F.claims(aud: "[]")), .invalidAudience),
        Row("C7 aud mixed array", claims(F.claims(aud: #"["x",123]"#)), .invalidAudience),
        Row("C7 aud array without ours", claims(F.claims(aud: #"["https://example.com/"]"#)), .invalidAudience),
        Row(
            "C7 aud array with ours (policy: a single string only)",
            claims(F.claims(aud: #"["https://fleetengine.googleapis.com/"]"#)),
            .invalidAudience
        ),
        Row(
            "C8 iss missing",
            claims(
                #"{"sub":"\#(F.issuer)","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"exp":\#(now + 3600),"authorization":{"vehicleid":"v1"}}"#
            ),
            .invalidIssuer
        ),
        Row("C8 iss untrusted", claims(F.claims(iss: "someone@evil-project.iam.gserviceaccount.com")), .unknownIssuer),
        Row(
            "C8 iss number",
            claims(
                #"{"iss":123,"sub":"\#(F.issuer)","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"exp":\#(now + 3600),"authorization":{"vehicleid":"v1"}}"#
            ),
            .invalidIssuer
        ),
        Row("C8 iss with trailing space", claims(F.claims(iss: F.issuer + " ")), .invalidIssuer),
        Row("C8 iss != sub", claims(F.claims(sub: F.consumerKey.clientEmail)), .subjectMismatch),
        Row(
            "C8 sub missing",
            claims(
                #"{"iss":"\#(F.issuer)","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"exp":\#(now + 3600),"authorization":{"vehicleid":"v1"}}"#
            ),
            .subjectMismatch
        ),
        Row(
            "C8 iss not the owner of kid's key",
            F.forge(payload: F.claims(iss: F.consumerKey.clientEmail)),
            .unknownKeyID
        ),
        Row("C9 fractional exp", claims(F.claims(exp: "\(now + 3600).5")), .invalidExpiration),
        Row("C9 fractional iat", claims(F.claims(iat: "\(now).5")), .invalidIssuedAt),
        Row("C9 exponent form iat", claims(F.claims(iat: "1.8e9")), .invalidIssuedAt),
        Row(
            "A4 authorization missing",
            claims(
                #"{"iss":"\#(F.issuer)","sub":"\#(F.issuer)","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"exp":\#(now + 3600)}"#
            ),
            .missingAuthorization
        ),
        Row("A4 authorization empty", claims(F.claims(authorization: "{}")), .missingAuthorization),
        Row(
            "A4 authorization not an object",
            claims(F.claims(authorization: #""vehicleid:v1""#)),
            .invalidAuthorization
        ),
        Row(
            "A4 value of the wrong type",
            claims(F.claims(authorization: #"{"vehicleid":["v1"]}"#)),
            .invalidAuthorization
        ),
        Row("A4 key case variant", claims(F.claims(authorization: #"{"VehicleId":"v1"}"#)), .invalidAuthorization),
        Row(
            "A4 unknown key",
            claims(F.claims(authorization: #"{"vehicleid":"v1","role":"admin"}"#)),
            .invalidAuthorization
        ),
        Row(
            "A6 path tricks in a claim",
            claims(F.claims(authorization: #"{"vehicleid":"v1/../v2"}"#)),
            .invalidAuthorization
        ),
        Row(
            "every claim type together",
            claims(
                F.claims(
                    authorization:
                        #"{"vehicleid":"*","tripid":"t","deliveryvehicleid":"d","taskid":"k","trackingid":"x"}"#
                )
            ),
            nil
        ),
        Row(
            "missing authorization on a forged token is still a signature failure",
            F.forge(
                payload:
                    #"{"iss":"\#(F.issuer)","sub":"\#(F.issuer)","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"exp":\#(now + 3600)}"#,
                key: F.strangerKey
            ),
            .invalidSignature
        ),
    ]

    @Test("format and encoding (F rows), size (D1)", arguments: formatRows)
    func format(_ row: Row) { check(row) }

    @Test("JSON (J rows)", arguments: jsonRows)
    func jsonRules(_ row: Row) { check(row) }

    @Test("header, algorithm and key selection (H rows)", arguments: headerRows)
    func headerRules(_ row: Row) { check(row) }

    @Test("signature (S rows)", arguments: signatureRows)
    func signatureRules(_ row: Row) { check(row) }

    @Test("claims and time (C rows)", arguments: claimRows)
    func claimRules(_ row: Row) { check(row) }

    func check(_ row: Row) {
        if let expected = row.expected {
            expectCode(expected, "\(row.id)") { try Fixtures.verifier.verify(row.token, nowSeconds: now) }
        } else {
            #expect(throws: Never.self, "\(row.id)") { try Fixtures.verifier.verify(row.token, nowSeconds: now) }
        }
    }

    @Test("only missing scopes is a 403; every other reason is a 401")
    func statusMapping() {
        #expect(TokenVerificationError.missingAuthorization.isPermissionDenied)
        #expect(!TokenVerificationError.invalidSignature.isPermissionDenied)
        #expect(!TokenVerificationError.expired.isPermissionDenied)
        #expect(TokenVerificationError.Code.allCases.count == 29)  // 27 + invalid_subject and invalid_azp (ID tokens)
        #expect(TokenVerificationError.Code.allCases.contains(.missingAuthorization))
    }

    @Test("messages never contain the token")
    func messagesOmitToken() {
        for row in Self.formatRows + Self.jsonRows + Self.headerRows + Self.signatureRows + Self.claimRows
        where row.token.count > 40 {
            do {
                _ = try Fixtures.verifier.verify(row.token, nowSeconds: now)
            } catch {
                for part in row.token.split(separator: ".") where part.count > 40 {
                    #expect(!error.message.contains(part), "\(row.id)")
                }
            }
        }
    }

    @Test("every single-character change of a valid token makes it invalid")
    func mutations() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
        var token = Array(good)
        var accepted: [Int] = []
        for index in token.indices {
            let original = token[index]
            let replacement = alphabet[(alphabet.firstIndex(of: original)! + 17) % alphabet.count]
            token[index] = replacement
            if (try? Fixtures.verifier.verify(String(token), nowSeconds: now)) != nil { accepted.append(index) }
            token[index] = original
        }
        #expect(accepted.isEmpty)
    }

    @Test("key rotation: both keys verify while both are trusted, the removed one stops")
    func rotation() throws {
        let rotated = F.forge(header: F.header(kid: F.rotatedDriverKey.privateKeyID), key: F.rotatedDriverKey)
        var store = TrustStore(serviceAccountKeys: [F.driverKey])
        expectCode(TokenVerificationError.unknownKeyID) {
            try FleetEngineTokenVerifier(trustStore: store).verify(rotated, nowSeconds: now)
        }
        store.add(F.rotatedDriverKey.verificationKey, issuer: F.issuer)
        #expect(throws: Never.self) { try FleetEngineTokenVerifier(trustStore: store).verify(rotated, nowSeconds: now) }
        #expect(throws: Never.self) { try FleetEngineTokenVerifier(trustStore: store).verify(good, nowSeconds: now) }
        var onlyNew = TrustStore()
        onlyNew.add(F.rotatedDriverKey.verificationKey, issuer: F.issuer)
        expectCode(TokenVerificationError.unknownKeyID) {
            try FleetEngineTokenVerifier(trustStore: onlyNew).verify(good, nowSeconds: now)
        }
    }

    @Test("a verified token reports its claims exactly as signed")
    func verifiedContents() throws {
        let verified = try Fixtures.verifier.verify(good, nowSeconds: now)
        #expect(verified.claims.issuer == F.issuer)
        #expect(verified.claims.authorization == AuthorizationClaims(vehicleID: "v1"))
        #expect(verified.claimsObject.jsonText == F.claims())
        #expect(verified.header["kid"] == .string(F.kid))
    }
}
