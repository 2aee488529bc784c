import FleetAuthCore
import FleetAuthJWT
import Foundation
import Testing

/// Project Wycheproof vectors (Tests/TestData/wycheproof), run under FleetAuth's RS256-only policy.
@Suite("Wycheproof")
struct WycheproofTests {
    static func load(_ name: String) throws -> [String: Any] {
        let data = try Fixtures.testData("wycheproof/\(name)")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test("rsa_signature_2048_sha256_test.json: every verdict (acceptable counts as invalid)")
    func rsaPKCS1v15() throws {
        let file = try Self.load("rsa_signature_2048_sha256_test.json")
        let groups = try #require(file["testGroups"] as? [[String: Any]])
        var counts = (valid: 0, invalid: 0)
        for group in groups {
            let pem = try #require(group["publicKeyPem"] as? String)
            let key = try RSAVerificationKey(pemRepresentation: pem, keyID: nil)
            for test in try #require(group["tests"] as? [[String: Any]]) {
                let id = test["tcId"] as! Int
                let message = Self.hex(test["msg"] as! String)
                let signature = Self.hex(test["sig"] as! String)
                let expected = (test["result"] as! String) == "valid"
                #expect(
                    key.isValidRS256Signature(signature, for: message) == expected,
                    "tcId \(id): \(test["comment"] ?? "")"
                )
                if expected { counts.valid += 1 } else { counts.invalid += 1 }
            }
        }
        #expect(counts.valid == 9)
        #expect(counts.valid + counts.invalid == file["numberOfTests"] as? Int)
    }

    /// Cases labelled valid that FleetAuth's policy refuses, each for a documented rule.
    static let policyOverrides: [Int: String] = [
        259: "empty payload segment (rule F2)"
    ]

    @Test("json_web_signature_test.json under the RS256-only policy")
    func jsonWebSignature() throws {
        let file = try Self.load("json_web_signature_test.json")
        let groups = try #require(file["testGroups"] as? [[String: Any]])
        var total = 0
        var accepted: [Int] = []
        for group in groups {
            let jwk = (group["public"] ?? group["private"]) as! [String: Any]
            let jwkData = try JSONSerialization.data(withJSONObject: jwk)
            // A key FleetAuth refuses to use (not RSA, not RS256, use "enc") verifies nothing.
            let key = try? RSAVerificationKey(jwk: JSONWebKey(json: StrictJSONParser().parseObject(Array(jwkData))))
            let verifier = RS256JWSVerifier(keys: key.map { [$0] } ?? [])
            for test in try #require(group["tests"] as? [[String: Any]]) {
                total += 1
                let id = test["tcId"] as! Int
                let token: String
                if let text = test["jws"] as? String {
                    token = text
                } else {
                    token = String(decoding: try JSONSerialization.data(withJSONObject: test["jws"]!), as: UTF8.self)
                }
                let headerAlg = (try? CompactJWS(token))?.algorithm
                let expected =
                    test["result"] as? String == "valid" && headerAlg == "RS256" && Self.policyOverrides[id] == nil
                let result = Result { try verifier.verify(token) }
                if case .success = result { accepted.append(id) }
                #expect(
                    (try? result.get()) != nil ? expected : !expected,
                    "tcId \(id) \(test["comment"] ?? ""): expected \(expected ? "valid" : "invalid")"
                )
            }
        }
        #expect(total == file["numberOfTests"] as? Int)
        // The RS256 cases Wycheproof labels valid, less the documented override.
        #expect(accepted.sorted() == [33, 260, 261, 262, 263, 345, 349])
    }

    @Test("json_web_key_test.json: key sets FleetAuth refuses verify nothing; RS256 keys it accepts verify")
    func jsonWebKey() throws {
        let file = try Self.load("json_web_key_test.json")
        let groups = try #require(file["testGroups"] as? [[String: Any]])
        for group in groups {
            let set = (group["public"] ?? group["private"]) as! [String: Any]
            let data = try JSONSerialization.data(withJSONObject: set)
            let keys = try? JSONWebKeySet(json: Array(data)).verificationKeys()
            let verifier = RS256JWSVerifier(keys: keys ?? [])
            for test in try #require(group["tests"] as? [[String: Any]]) {
                let id = test["tcId"] as! Int
                let token = test["jws"] as! String
                let alg = (try? CompactJWS(token))?.algorithm
                let expected = test["result"] as? String == "valid" && alg == "RS256"
                let verified = (try? verifier.verify(token)) != nil
                #expect(verified == expected, "tcId \(id) \(test["comment"] ?? "") (\(group["comment"] ?? ""))")
            }
        }
    }
}

extension WycheproofTests {
    @Test("the ROCA-vulnerable key of json_web_key_test.json is refused as weak, the others for their own reasons")
    func refusedKeyReasons() throws {
        let file = try Self.load("json_web_key_test.json")
        let groups = try #require(file["testGroups"] as? [[String: Any]])
        func error(_ comment: String) throws -> KeyError.Code? {
            let group = try #require(groups.first { $0["comment"] as? String == comment })
            let data = try JSONSerialization.data(withJSONObject: group["public"] ?? group["private"]!)
            do {
                _ = try JSONWebKeySet(json: Array(data)).verificationKeys()
                return nil
            } catch {
                return error.code
            }
        }
        #expect(try error("jws_rsa_roca_key") == .weakKey)
        #expect(try error("keysize_too_small") == .keyTooSmall)
        #expect(try error("exponentOne") == .invalidJWK)
    }
}
