import Crypto
import CryptoExtras
import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import Foundation
import Testing

/// ID tokens as OpenID Providers sign them (RS256 and ES256), and the hostile rows a token server must refuse.
@Suite("ID tokens: what is accepted and what is refused")
struct IDTokenVerifierTests {
    static let issuer = "https://op.example.com/realms/fleet"
    static let client = "fleet-app"
    static let now: Int64 = 1_800_000_000
    static let rsa = Fixtures.driverKey
    static let ec = P256.Signing.PrivateKey()
    static let ecKID = "ec-1"

    static var rsaJWK: JSONWebKey {
        var jwk = rsa.verificationKey.jwk
        jwk.keyID = "rsa-1"
        return jwk
    }

    static var ecJWK: JSONWebKey {
        let raw = Array(ec.publicKey.rawRepresentation)
        return JSONWebKey(keyID: ecKID, x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))
    }

    static let keys = try! JSONWebKeySet(keys: [rsaJWK, ecJWK]).signatureVerificationKeys().keys
    static let verifier = IDTokenVerifier(issuer: issuer, audiences: [client])

    static func claims(_ changes: JSONObject = [:], removing: [String] = []) -> JSONObject {
        var object: JSONObject = [
            "iss": .string(issuer), "sub": "248289761001", "aud": .string(client), "iat": .integer(now - 5),
            "exp": .integer(now + 600),
        ]
        for member in changes { object[member.key] = member.value }
        for name in removing { object[name] = nil }
        return object
    }

    enum Signer { case rsa, ec, none }

    static func token(
        _ claims: JSONObject = claims(),
        header: JSONObject = [:],
        withoutKeyID: Bool = false,
        signer: Signer = .rsa
    ) throws -> String {
        var protected: JSONObject
        switch signer {
        case .rsa: protected = ["alg": "RS256", "kid": "rsa-1"]
        case .ec: protected = ["alg": "ES256", "kid": .string(ecKID)]
        case .none: protected = ["alg": "none"]
        }
        for member in header { protected[member.key] = member.value }
        if withoutKeyID { protected["kid"] = nil }
        let input = Base64URL.encode(protected.jsonBytes) + "." + Base64URL.encode(claims.jsonBytes)
        let signature: [UInt8]
        switch signer {
        case .rsa: signature = try LocalKeySigner(key: rsa).signSynchronously(Array(input.utf8))
        case .ec: signature = Array(try ec.signature(for: Array(input.utf8)).rawRepresentation)
        case .none: signature = [0]
        }
        return input + "." + Base64URL.encode(signature)
    }

    static func refusal(_ token: String, keys: [SignatureVerificationKey] = keys, now: Int64 = now)
        -> TokenVerificationError.Code?
    {
        do {
            _ = try verifier.verify(token, keys: keys, nowSeconds: now)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("an RS256 and an ES256 ID token verify, with their claims")
    func accepted() throws {
        let rs = try Self.verifier.verify(try Self.token(), keys: Self.keys, nowSeconds: Self.now)
        #expect(rs.issuer == Self.issuer && rs.subject == "248289761001" && rs.algorithm == "RS256")
        let es = try Self.verifier.verify(try Self.token(signer: .ec), keys: Self.keys, nowSeconds: Self.now)
        #expect(es.algorithm == "ES256" && es.keyID == Self.ecKID)
        // Without kid, the keys of the token's algorithm are tried.
        #expect(Self.refusal(try Self.token(withoutKeyID: true, signer: .ec)) == nil)
        #expect(Self.refusal(try Self.token(withoutKeyID: true)) == nil)
        // An array audience holding the client, with azp naming it, is fine; so is a single-value array.
        #expect(Self.refusal(try Self.token(Self.claims(["aud": [.string(Self.client)]]))) == nil)
        #expect(
            Self.refusal(
                try Self.token(Self.claims(["aud": [.string(Self.client), "other"], "azp": .string(Self.client)]))
            )
                == nil
        )
        // Up to 60 s of clock difference either way.
        #expect(Self.refusal(try Self.token(), now: Self.now + 600 + 59) == nil)
        #expect(Self.refusal(try Self.token(Self.claims(["iat": .integer(Self.now + 60)]))) == nil)
        #expect(Self.refusal(try Self.token(Self.claims(["nbf": .integer(Self.now + 60)]))) == nil)
    }

    @Test("claims: wrong issuer, audience, azp, subject and times are refused")
    func claimRows() throws {
        let rows: [(JSONObject, [String], TokenVerificationError.Code)] = [
            (Self.claims(["iss": "https://op.example.com/realms/fleet/"]), [], .unknownIssuer),
            (Self.claims(["iss": "https://evil.example.com"]), [], .unknownIssuer),
            (Self.claims(removing: ["iss"]), [], .invalidIssuer),
            (Self.claims(["aud": "another-app"]), [], .invalidAudience),
            (Self.claims(["aud": ["another-app"]]), [], .invalidAudience),
            (Self.claims(["aud": .array([.string(Self.client), .integer(1)])]), [], .invalidAudience),
            (Self.claims(removing: ["aud"]), [], .invalidAudience),
            (Self.claims(["aud": [.string(Self.client), "other"]]), [], .invalidAuthorizedParty),
            (Self.claims(["aud": [.string(Self.client), "other"], "azp": "other"]), [], .invalidAuthorizedParty),
            (Self.claims(removing: ["sub"]), [], .invalidSubject),
            (Self.claims(["sub": ""]), [], .invalidSubject),
            (Self.claims(["sub": "a\u{0}b"]), [], .invalidSubject),
            (Self.claims(["exp": .integer(Self.now - 60)]), [], .expired),
            (Self.claims(removing: ["exp"]), [], .invalidExpiration),
            (Self.claims(["exp": .double(Double(Self.now) + 600.5)]), [], .invalidExpiration),
            (Self.claims(["iat": .integer(Self.now + 61)]), [], .issuedInFuture),
            (Self.claims(removing: ["iat"]), [], .invalidIssuedAt),
            (Self.claims(["nbf": .integer(Self.now + 61)]), [], .notYetValid),
        ]
        for (claims, _, expected) in rows {
            #expect(Self.refusal(try Self.token(claims)) == expected, "\(claims.jsonText)")
        }
    }

    @Test("headers and signatures: none, HS256 with the public key, injected keys, other keys, mixed algorithms")
    func signatureRows() throws {
        // alg none, and alg none written with other cases.
        #expect(Self.refusal(try Self.token(signer: .none)) == .unsupportedAlgorithm)
        #expect(Self.refusal(try Self.token(header: ["alg": "None"])) == .unsupportedAlgorithm)
        // HS256 keyed with the RSA public key's bytes (the classic algorithm confusion).
        let hsHeader: JSONObject = ["alg": "HS256", "kid": "rsa-1"]
        let input = Base64URL.encode(hsHeader.jsonBytes) + "." + Base64URL.encode(Self.claims().jsonBytes)
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array(input.utf8),
            using: SymmetricKey(data: Array(Self.rsa.verificationKey.pemRepresentation.utf8))
        )
        #expect(Self.refusal(input + "." + Base64URL.encode(Array(mac))) == .unsupportedAlgorithm)
        for alg in ["RS384", "PS256", "ES384", "EdDSA"] {
            #expect(Self.refusal(try Self.token(header: ["alg": .string(alg)])) == .unsupportedAlgorithm, "\(alg)")
        }
        // Keys offered by the token itself.
        let attacker = P256.Signing.PrivateKey()
        let raw = Array(attacker.publicKey.rawRepresentation)
        let injected = JSONWebKey(keyID: "x", x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))
        #expect(
            Self.refusal(try Self.token(header: ["jwk": .object(injected.jsonObject)], signer: .ec))
                == .untrustedKeyReference
        )
        #expect(
            Self.refusal(try Self.token(header: ["jku": "https://evil.example.com/jwks"])) == .untrustedKeyReference
        )
        #expect(
            Self.refusal(try Self.token(header: ["x5u": "https://evil.example.com/cert"])) == .untrustedKeyReference
        )
        // Signed by another issuer's key under a kid this issuer has.
        let other = try TestKeys.keyNow(projectID: "other", name: "other")
        var forged = try Self.token()
        let otherSignature = try LocalKeySigner(key: other).signSynchronously(
            Array(forged.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        )
        forged = forged.split(separator: ".").prefix(2).joined(separator: ".") + "." + Base64URL.encode(otherSignature)
        #expect(Self.refusal(forged) == .invalidSignature)
        // An ES256 token naming the RSA key, and an RS256 token naming the EC key.
        #expect(Self.refusal(try Self.token(header: ["kid": "rsa-1"], signer: .ec)) == .invalidSignature)
        #expect(Self.refusal(try Self.token(header: ["kid": .string(Self.ecKID)])) == .invalidSignature)
        // A DER-encoded ECDSA signature is not the JWS form.
        let ecToken = try Self.token(signer: .ec)
        let prefix = ecToken.split(separator: ".").prefix(2).joined(separator: ".")
        let der = try Self.ec.signature(for: Array(prefix.utf8)).derRepresentation
        #expect(Self.refusal(prefix + "." + Base64URL.encode(Array(der))) == .invalidSignature)
        // A kid the set does not have: the caller may refetch once.
        #expect(Self.refusal(try Self.token(header: ["kid": "rotated-2"])) == .unknownKeyID)
        // No keys at all (the set could not be fetched): closed.
        #expect(Self.refusal(try Self.token(), keys: []) == .unknownKeyID)
        #expect(Self.refusal(try Self.token(withoutKeyID: true), keys: []) == .invalidSignature)
    }

    @Test("EC JWKs: P-256 only, a point on the curve, 32-byte coordinates; unusable keys are skipped, not fatal")
    func ecKeys() throws {
        var wrongCurve = Self.ecJWK
        wrongCurve.curve = "P-384"
        expectCode(KeyError.invalidJWK) { try ES256VerificationKey(jwk: wrongCurve) }
        var offCurve = Self.ecJWK
        offCurve.y = Base64URL.encode([UInt8](repeating: 7, count: 32))
        expectCode(KeyError.invalidJWK) { try ES256VerificationKey(jwk: offCurve) }
        var short = Self.ecJWK
        short.x = Base64URL.encode([UInt8](repeating: 7, count: 31))
        expectCode(KeyError.invalidJWK) { try ES256VerificationKey(jwk: short) }
        var wrongAlg = Self.ecJWK
        wrongAlg.algorithm = "ES384"
        expectCode(KeyError.invalidJWK) { try ES256VerificationKey(jwk: wrongAlg) }
        // A provider's set with an encryption key and a 1024-bit key keeps its usable signing keys.
        var encryption = Self.rsaJWK
        encryption.keyID = "enc-1"
        encryption.use = "enc"
        let json = JSONWebKeySet(keys: [Self.rsaJWK, encryption, Self.ecJWK]).jsonObject.jsonBytes
        let (keys, skipped) = try JSONWebKeySet(json: json).signatureVerificationKeys()
        #expect(keys.map(\.keyID) == ["rsa-1", Self.ecKID])
        #expect(skipped.count == 1 && skipped[0].contains("enc-1"))
        // The round trip of an EC JWK.
        let parsed = try JSONWebKeySet(json: JSONWebKeySet(keys: [Self.ecJWK]).jsonObject.jsonBytes)
        #expect(parsed.keys == [Self.ecJWK])
        // Two usable keys with one kid make the set ambiguous.
        var twin = Self.ecJWK
        twin.keyID = "rsa-1"
        expectCode(KeyError.invalidJWKSet) {
            try JSONWebKeySet(keys: [Self.rsaJWK, twin]).signatureVerificationKeys()
        }
    }
}
