import FleetAuthCore
import FleetAuthJWT
import Foundation
import Testing

/// A signer that answers whole tokens, as IAM `signJwt` does, but whose answer a test controls: `rewrite` turns the
/// claims JSON it was sent into the payload it signs, and `header` is its protected header.
struct ScriptedTokenSigner: TokenSigner {
    let key: ServiceAccountKey
    var header: JSONObject = ["alg": "RS256", "kid": "google-kid", "typ": "JWT"]
    var rewrite: @Sendable ([UInt8]) -> [UInt8] = { $0 }
    var answer: (@Sendable (String) -> String)?

    var serviceAccountEmail: String { key.clientEmail }

    func signToken(payload: [UInt8]) async throws -> String {
        let input = Base64URL.encode(header.jsonBytes) + "." + Base64URL.encode(rewrite(payload))
        let jwt = input + "." + Base64URL.encode(try LocalKeySigner(key: key).signSynchronously(Array(input.utf8)))
        return answer?(jwt) ?? jwt
    }
}

@Suite("Minting with a signer that answers whole tokens (IAM signJwt)")
struct WholeTokenSignerTests {
    let now = Date(timeIntervalSince1970: TimeInterval(Fixtures.now))

    func mint(_ signer: ScriptedTokenSigner) async throws -> FleetEngineToken {
        try await FleetEngineTokenMinter(signer: signer).mint(.driver(vehicleID: "v1"), now: now)
    }

    func expectRefusal(_ signer: ScriptedTokenSigner, _ code: SigningError.Code) async {
        await #expect {
            _ = try await mint(signer)
        } throws: { error in
            (error as? SigningError)?.code == code
        }
    }

    @Test("the signer's token is used as answered, with its kid, and verifies")
    func accepted() async throws {
        let token = try await mint(ScriptedTokenSigner(key: Fixtures.driverKey))
        #expect(token.keyID == "google-kid")
        #expect(token.claims.authorization == (try FleetEngineTokenType.driver(vehicleID: "v1")).authorization)
        let jws = try CompactJWS(token.jwt)
        #expect(
            jws.withSigningInput { Fixtures.driverKey.verificationKey.isValidRS256Signature(jws.signature, for: $0) }
        )
    }

    @Test("claims re-serialized in another order and spacing are the same claims")
    func reordered() async throws {
        let signer = ScriptedTokenSigner(key: Fixtures.driverKey) { payload in
            let object = try! StrictJSONParser().parseObject(payload)
            var reversed = JSONObject()
            for member in object.reversed() { reversed[member.key] = member.value }
            return Array(JSONValue.object(reversed).prettyText().utf8)
        }
        let token = try await mint(signer)
        #expect(token.keyID == "google-kid")
    }

    @Test(
        "a token whose claims differ from those sent is refused",
        arguments: ["exp", "authorization", "iss", "extra"]
    )
    func mismatch(_ claim: String) async {
        let signer = ScriptedTokenSigner(key: Fixtures.driverKey) { payload in
            var object = try! StrictJSONParser().parseObject(payload)
            switch claim {
            case "exp": object["exp"] = .integer(object["exp"]!.integerValue! + 3600)
            case "authorization": object["authorization"] = ["vehicleid": "*"]
            case "iss": object["iss"] = "someone@else.iam.gserviceaccount.com"
            default: object["extra"] = true
            }
            return object.jsonBytes
        }
        await expectRefusal(signer, .claimsMismatch)
    }

    @Test("a claim left out is refused")
    func missingClaim() async {
        let signer = ScriptedTokenSigner(key: Fixtures.driverKey) { payload in
            var object = try! StrictJSONParser().parseObject(payload)
            object["aud"] = nil
            return object.jsonBytes
        }
        await expectRefusal(signer, .claimsMismatch)
    }

    @Test("a header that is not RS256, or whose typ is not JWT, is refused")
    func wrongHeader() async {
        await expectRefusal(
            ScriptedTokenSigner(key: Fixtures.driverKey, header: ["alg": "HS256", "typ": "JWT"]),
            .claimsMismatch
        )
        await expectRefusal(
            ScriptedTokenSigner(key: Fixtures.driverKey, header: ["alg": "none", "typ": "JWT"]),
            .claimsMismatch
        )
        await expectRefusal(
            ScriptedTokenSigner(key: Fixtures.driverKey, header: ["alg": "RS256", "typ": "JWE"]),
            .claimsMismatch
        )
    }

    @Test("an answer that is not a compact JWT, or has a short signature, is refused")
    func garbage() async {
        await expectRefusal(
            ScriptedTokenSigner(key: Fixtures.driverKey, answer: { _ in "not a token" }),
            .invalidResponse
        )
        await expectRefusal(
            ScriptedTokenSigner(
                key: Fixtures.driverKey,
                answer: { $0.split(separator: ".")[0..<2].joined(separator: ".") + ".AAAA" }
            ),
            .invalidResponse
        )
        await expectRefusal(
            ScriptedTokenSigner(key: Fixtures.driverKey, rewrite: { _ in Array("[1,2]".utf8) }),
            .invalidResponse
        )
    }

    @Test("an RS256 signer's token is built by the minter with its kid")
    func rs256Signer() async throws {
        let token = try await FleetEngineTokenMinter(signer: LocalKeySigner(key: Fixtures.driverKey)).mint(
            .server,
            now: now
        )
        #expect(token.keyID == Fixtures.kid)
        let jws = try CompactJWS(token.jwt)
        #expect(jws.header.keys == ["alg", "typ", "kid"])
    }

    @Test("RS256Signer's default signToken gives the minter's bytes")
    func defaultSignToken() async throws {
        let signer = LocalKeySigner(key: Fixtures.driverKey)
        let minted = try await FleetEngineTokenMinter(signer: signer).mint(.server, now: now)
        let payload = Base64URL.decode(minted.jwt.split(separator: ".")[1])!
        #expect(try await signer.signToken(payload: payload) == minted.jwt)
    }
}
