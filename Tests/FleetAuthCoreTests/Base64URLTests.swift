import FleetAuthCore
import Foundation
import Testing

@Suite("Base64URL")
struct Base64URLTests {
    @Test("RFC 4648 test vectors, unpadded and URL-safe")
    func vectors() {
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test("decode(encode(x)) == x for every length up to 64 and every byte value")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Base64URL.decode(Base64URL.encode(all)) == all)
    }

    @Test(
        "encode agrees with Foundation's base64 (URL alphabet, no padding) for every length up to 100, contiguous or not"
    )
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...100 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == expected, "length \(length)")
            #expect(Base64URL.encode(bytes.lazy.map { $0 }) == expected, "length \(length), not contiguous")
        }
    }

    @Test(
        "non-canonical and foreign encodings are refused (F4, F5)",
        arguments: [
            "Zg==",  // padding
            "Zm9v=",  // padding
            "Z",  // length ≡ 1 (mod 4)
            "Zm9vY",  // length ≡ 1 (mod 4)
            "Zh",  // non-zero unused bits: 'h' carries bits into the unused part
            "Zm9",  // non-zero unused bits; "Zm8" is the canonical spelling of "fo"
            "Zm8",  // canonical
            "Zm+",  // '+' is standard base64, not base64url
            "Zm/",  // '/'
            "Zm 9v",  // space
            "Zm9v\n",  // newline
            "QUJDRB",  // unused bits set: decodes to the same bytes as QUJDRA with lenient decoders
            "Zm#v",
            "Zm?v",
        ]
    )
    func refused(_ text: String) {
        if text == "Zm8" {
            #expect(Base64URL.decode(text) == Array("fo".utf8))
        } else {
            #expect(Base64URL.decode(text) == nil)
        }
    }

    @Test("each canonical string has exactly one decoding and no other string maps to it")
    func canonicalUniqueness() {
        // For a 1-byte input the last character has 4 unused bits: only 1 of the 16 variants is canonical.
        let canonical = Base64URL.encode([0x41])
        let variants = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".map {
            String(canonical.first!) + String($0)
        }
        let accepted = variants.filter { Base64URL.decode($0) == [0x41] }
        #expect(accepted == [canonical])
    }
}
