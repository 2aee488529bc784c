import Crypto
import CryptoExtras
import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import Foundation
import Testing

@Suite("Service-account key files", .temporaryResources)
struct ServiceAccountKeyTests {
    @Test("a created key file has Google's format, mode 0600, and loads back with the same key")
    func createWriteLoad() throws {
        let directory = try Fixtures.temporaryDirectory()
        let path = directory + "/driver.json"
        let key = try ServiceAccountKey.generate(projectID: "demo-project", name: "fleet-driver")
        try key.write(to: path)

        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let object = try StrictJSONParser().parseObject(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(object["type"] == "service_account")
        #expect(object["project_id"] == "demo-project")
        #expect(object["client_email"] == "fleet-driver@demo-project.iam.gserviceaccount.com")
        #expect(object["token_uri"] == "https://oauth2.googleapis.com/token")
        let keyID = try #require(object["private_key_id"]?.stringValue)
        #expect(keyID.count == 40 && keyID.allSatisfy(\.isHexDigit))
        let pem = try #require(object["private_key"]?.stringValue)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n") && pem.hasSuffix("-----END PRIVATE KEY-----\n"))

        let loaded = try ServiceAccountKey(contentsOf: path)
        #expect(loaded.clientEmail == key.clientEmail && loaded.privateKeyID == key.privateKeyID)
        #expect(loaded.verificationKey.jwk == key.verificationKey.jwk)
        #expect(loaded.verificationKey.keySizeInBits == 2048)

        // Never overwritten.
        expectCode(ServiceAccountKeyError.fileExists) { try key.write(to: path) }
        #expect(try ServiceAccountKey(contentsOf: path).privateKeyID == keyID)
    }

    @Test("two created keys differ in key ID and key")
    func randomKeys() throws {
        let a = try ServiceAccountKey.generate(projectID: "p-one", name: "a")
        let b = try ServiceAccountKey.generate(projectID: "p-one", name: "a")
        #expect(a.privateKeyID != b.privateKeyID)
        #expect(a.verificationKey.jwk.modulus != b.verificationKey.jwk.modulus)
    }

    @Test("project IDs and names that cannot form an email are refused")
    func identifiers() {
        for (project, name) in [
            ("Demo", "a"), ("demo", "A"), ("demo", "a b"), ("-demo", "a"), ("demo", "a@b"), ("", "a"), ("demo", "a-"),
        ] {
            expectCode(ServiceAccountKeyError.invalidIdentifier) {
                try ServiceAccountKey.generate(projectID: project, name: name)
            }
        }
    }

    static func keyFile(_ edit: (inout JSONObject) -> Void) -> [UInt8] {
        var object = Fixtures.driverKey.jsonObject
        edit(&object)
        return JSONValue.object(object).jsonBytes
    }

    static let smallKeyPEM = try! _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).pkcs8PEMRepresentation
    static let ecKeyPEM = P256.Signing.PrivateKey().pemRepresentation

    @Test(
        "bad key files get an error that names the file and the problem, never the key material",
        arguments: [
            (Array("not json".utf8), ServiceAccountKeyError.notJSON, "not a service-account key file"),
            (Array("[1,2]".utf8), .notJSON, "not a service-account key file"),
            (Array(#"{"type":"authorized_user","client_id":"x"}"#.utf8), .notServiceAccount, "authorized_user"),
            (keyFile { $0["type"] = nil }, .notServiceAccount, "not a service-account key file"),
            (keyFile { $0["private_key"] = nil }, .missingField, "private_key"),
            (keyFile { $0["client_email"] = nil }, .missingField, "client_email"),
            (keyFile { $0["private_key_id"] = .integer(5) }, .missingField, "private_key_id"),
            (keyFile { $0["project_id"] = "" }, .missingField, "project_id"),
            (
                keyFile { $0["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" },
                .invalidPrivateKey, "not a PEM-encoded RSA private key"
            ),
            (
                keyFile { $0["private_key"] = .string(ecKeyPEM) }, .invalidPrivateKey,
                "not a PEM-encoded RSA private key"
            ),
            (keyFile { $0["private_key"] = .string(smallKeyPEM) }, .keyTooSmall, "1024 bits"),
        ]
    )
    func badKeyFiles(_ contents: [UInt8], _ expected: ServiceAccountKeyError, _ phrase: String) throws {
        let path = try Fixtures.temporaryDirectory() + "/key.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents)))
        let error = expectCode(expected) { try ServiceAccountKey(contentsOf: path) }
        let message = error?.message ?? ""
        #expect(message.hasPrefix(path + ":"))
        #expect(message.contains(phrase))
        // No line of any PEM body appears in the message.
        let pems = [Fixtures.driverKey.jsonObject["private_key"]!.stringValue!, Self.smallKeyPEM, Self.ecKeyPEM]
        for line in pems.flatMap({ $0.split(separator: "\n") }) where !line.hasPrefix("-----") {
            #expect(!message.contains(line))
        }
    }

    @Test("a missing file is named")
    func missingFile() {
        let error = expectCode(ServiceAccountKeyError.fileNotFound) {
            try ServiceAccountKey(contentsOf: "/nonexistent/key.json")
        }
        #expect(error?.message.contains("/nonexistent/key.json") == true)
    }

    @Test("Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS, then gcloud's well-known file")
    func applicationDefault() throws {
        let directory = try Fixtures.temporaryDirectory()
        let path = directory + "/adc.json"
        try Fixtures.consumerKey.write(to: path)
        let key = try ServiceAccountKey.applicationDefault(environment: ["GOOGLE_APPLICATION_CREDENTIALS": path])
        #expect(key.clientEmail == Fixtures.consumerKey.clientEmail)

        expectCode(ServiceAccountKeyError.fileNotFound) {
            try ServiceAccountKey.applicationDefault(environment: [
                "GOOGLE_APPLICATION_CREDENTIALS": directory + "/none.json"
            ])
        }
        expectCode(ServiceAccountKeyError.noCredentials) {
            try ServiceAccountKey.applicationDefault(environment: ["HOME": directory])
        }
        try FileManager.default.createDirectory(
            atPath: directory + "/.config/gcloud",
            withIntermediateDirectories: true
        )
        try Fixtures.driverKey.write(to: directory + "/.config/gcloud/application_default_credentials.json")
        #expect(
            try ServiceAccountKey.applicationDefault(environment: ["HOME": directory]).clientEmail == Fixtures.issuer
        )
    }
}

@Suite("JWK sets", .temporaryResources)
struct JSONWebKeySetTests {
    @Test("published keys have the documented members and load back")
    func publishAndLoad() throws {
        let set = JSONWebKeySet([Fixtures.driverKey.verificationKey, Fixtures.consumerKey.verificationKey])
        let text = JSONValue.object(set.jsonObject).jsonText
        let object = try StrictJSONParser().parseObject(text)
        let first = try #require(object["keys"]?.arrayValue?.first?.objectValue)
        #expect(first.keys == ["kid", "kty", "alg", "use", "n", "e"])
        #expect(first["kid"] == .string(Fixtures.kid))
        #expect(first["e"] == "AQAB")
        let loaded = try JSONWebKeySet(json: Array(text.utf8)).verificationKeys()
        #expect(loaded.map(\.keyID) == [Fixtures.kid, Fixtures.consumerKey.privateKeyID])
        #expect(loaded[0].jwk == Fixtures.driverKey.verificationKey.jwk)
    }

    static func set(_ edit: (inout JSONObject) -> Void) -> [UInt8] {
        var key = Fixtures.driverKey.verificationKey.jwk.jsonObject
        edit(&key)
        return JSONValue.object(JSONObject(["keys": .array([.object(key)])])).jsonBytes
    }

    @Test(
        "keys that must not verify RS256 are refused",
        arguments: [
            (set { $0["use"] = "enc" }, KeyError.invalidJWK),
            (set { $0["alg"] = "RS512" }, .invalidJWK),
            (set { $0["kty"] = "EC" }, .invalidJWK),
            (set { $0["key_ops"] = ["sign"] }, .invalidJWK),
            (set { $0["d"] = "AQAB" }, .invalidJWK),
            (set { $0["n"] = "AQAB" }, .keyTooSmall),
            (set { $0["n"] = "not base64!" }, .invalidJWK),
            (set { $0["e"] = "AQ" }, .invalidJWK),  // e = 1
            (set { $0["e"] = "Ag" }, .invalidJWK),  // e = 2
            (Array(#"{"keys":{}}"#.utf8), .invalidJWKSet),
            (Array(#"{"keys":[1]}"#.utf8), .invalidJWKSet),
            (Array(#"{"keys":[],"keys":[]}"#.utf8), .invalidJWKSet),
        ]
    )
    func refused(_ json: [UInt8], _ expected: KeyError) {
        expectCode(expected) { try JSONWebKeySet(json: json).verificationKeys() }
    }

    @Test("two keys with one kid make a set ambiguous")
    func duplicateKid() {
        let key = Fixtures.driverKey.verificationKey.jwk
        expectCode(KeyError.invalidJWKSet) { try JSONWebKeySet(keys: [key, key]).verificationKeys() }
    }

    @Test("public keys under 2048 bits are refused")
    func smallPublicKey() throws {
        let small = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).publicKey
        expectCode(KeyError.keyTooSmall) {
            try RSAVerificationKey(pemRepresentation: small.pemRepresentation, keyID: "k")
        }
    }
}
