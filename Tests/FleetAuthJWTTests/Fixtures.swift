import CryptoExtras
import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import Foundation

/// Keys and token-forging helpers shared by the JWT tests. Keys are generated once per test process.
enum Fixtures {
    static let driverKey = try! TestKeys.keyNow(projectID: "demo-project", name: "driver-sa")
    static let consumerKey = try! TestKeys.keyNow(projectID: "demo-project", name: "consumer-sa")
    /// A second key of the driver service account, as after a rotation.
    static let rotatedDriverKey = try! ServiceAccountKey(json: rekeyed(driverKey), source: "rotated")
    /// A key no trust store knows.
    static let strangerKey = try! TestKeys.keyNow(projectID: "evil-project", name: "stranger")

    static let now: Int64 = 1_800_000_000
    static var issuer: String { driverKey.clientEmail }
    static var kid: String { driverKey.privateKeyID }

    static let verifier = FleetEngineTokenVerifier(
        trustStore: TrustStore(serviceAccountKeys: [driverKey, consumerKey])
    )

    /// The swift-crypto private key of a service-account key, for signing things the minter never would.
    static func rsaKey(_ key: ServiceAccountKey) -> _RSA.Signing.PrivateKey {
        try! _RSA.Signing.PrivateKey(pemRepresentation: key.jsonObject["private_key"]!.stringValue!)
    }

    /// The same service account with a fresh RSA key and key ID.
    static func rekeyed(_ key: ServiceAccountKey) -> [UInt8] {
        var object = key.jsonObject
        object["private_key_id"] = .string(String(repeating: "ab", count: 20))
        object["private_key"] = .string(try! _RSA.Signing.PrivateKey(keySize: .bits2048).pkcs8PEMRepresentation)
        return JSONValue.object(object).jsonBytes
    }

    static func header(kid: String? = Fixtures.kid, alg: String = "RS256") -> String {
        if let kid { return #"{"alg":"\#(alg)","typ":"JWT","kid":"\#(kid)"}"# }
        return #"{"alg":"\#(alg)","typ":"JWT"}"#
    }

    /// A claims set as JSON text; `extra` is spliced in verbatim (it may break JSON on purpose).
    static func claims(
        iss: String = Fixtures.issuer,
        sub: String? = nil,
        aud: String = #""https://fleetengine.googleapis.com/""#,
        iat: String = "\(now)",
        exp: String = "\(now + 3600)",
        authorization: String = #"{"vehicleid":"v1"}"#,
        extra: String = ""
    ) -> String {
        #"{"iss":"\#(iss)","sub":"\#(sub ?? iss)","aud":\#(aud),"iat":\#(iat),"exp":\#(exp),"authorization":\#(authorization)\#(extra)}"#
    }

    static func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

    /// A token with this exact header and payload text, correctly RS256-signed by `key`.
    static func forge(header: String = header(), payload: String = claims(), key: ServiceAccountKey = driverKey)
        -> String
    {
        forge(rawHeader: Array(header.utf8), rawPayload: Array(payload.utf8), key: key)
    }

    static func forge(rawHeader: [UInt8], rawPayload: [UInt8], key: ServiceAccountKey = driverKey) -> String {
        let input = Base64URL.encode(rawHeader) + "." + Base64URL.encode(rawPayload)
        let signature = try! LocalKeySigner(key: key).signSynchronously(Array(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    /// A token whose signature segment is `signature`, over this header and payload.
    static func withSignature(_ signature: [UInt8], header: String = header(), payload: String = claims()) -> String {
        b64(header) + "." + b64(payload) + "." + Base64URL.encode(signature)
    }

    /// Test data shipped in `Tests/TestData`.
    static func testData(_ path: String) throws -> Data {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return try Data(contentsOf: root.appendingPathComponent("TestData").appendingPathComponent(path))
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = try TestResources.required().temporaryDirectory("fleetauth-tests")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
