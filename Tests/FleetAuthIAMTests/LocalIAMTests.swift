import FleetAuthCore
import FleetAuthIAM
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The emulator's stand-ins for Google's IAM and metadata server (``LocalIAM``), on their own loopback listener: the
/// IAM signer mints through them, the emulator accepts what they signed, and their refusals are IAM's.
@Suite("The emulator plays IAM and the metadata server", .temporaryResources)
struct LocalIAMTests {
    struct Emulator {
        let driver: ServiceAccountKey
        /// A Fleet Engine role account the emulator holds but the runtime identity is not granted.
        let roleAccount: ServiceAccountKey
        /// The IAM stand-ins' listener.
        let client: any TestClientProtocol
        /// The emulator's API, in process.
        let api: any TestClientProtocol
        let base: String
        let host: String

        func signer(_ key: ServiceAccountKey? = nil) -> IAMCredentialsSigner {
            IAMCredentialsSigner(
                serviceAccountEmail: (key ?? driver).clientEmail,
                accessTokens: AccessTokenSource(credentials: .metadataServer(host: host), timeout: .seconds(30)),
                configuration: .init(baseURL: base, attemptTimeout: .seconds(30), maximumAttempts: 1)
            )
        }

        func accessToken() async throws -> String {
            try await AccessTokenSource(credentials: .metadataServer(host: host), timeout: .seconds(30)).token()
        }

        /// `POST …/serviceAccounts/{email}:{method}` with `body`, authorized by a fresh access token: the status and
        /// the body.
        func sign(_ method: String, as email: String, _ body: String) async throws -> (HTTPResponse.Status, String) {
            let auth: HTTPFields = [.authorization: "Bearer \(try await accessToken())"]
            return try await client.execute(
                uri: "/v1/projects/-/serviceAccounts/\(email):\(method)",
                method: .post,
                headers: auth,
                body: ByteBuffer(string: body)
            ) { ($0.status, String(buffer: $0.body)) }
        }
    }

    static let driver = try! TestKeys.keyNow(projectID: "demo-project", name: "iam-driver")
    static let roleAccount = try! TestKeys.keyNow(projectID: "demo-project", name: "fleet-engine-role")

    static func trust(_ directory: String) throws -> TrustConfiguration {
        try driver.write(to: directory + "/driver.json")
        try roleAccount.write(to: directory + "/role.json")
        return TrustConfiguration(serviceAccounts: [
            .init(
                account: TrustedServiceAccount(
                    email: driver.clientEmail,
                    project: "demo-project",
                    roles: [.driverSdkUser]
                ),
                keySource: .keyFile(directory + "/driver.json")
            ),
            .init(
                account: TrustedServiceAccount(
                    email: roleAccount.clientEmail,
                    project: "demo-project",
                    roles: [.serviceSuperUser]
                ),
                keySource: .keyFile(directory + "/role.json")
            ),
        ])
    }

    func withEmulator(_ body: @escaping @Sendable (Emulator) async throws -> Void) async throws {
        let directory = try TestResources.required().temporaryDirectory("fleetauth-local-iam")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let iam = try await LocalIAM(
            keys: [Self.driver, Self.roleAccount],
            signableAccounts: [Self.driver.clientEmail]
        )
        let server = try await EmulatorServer(
            trust: try Self.trust(directory),
            store: try SQLiteFleetStore(inMemory: ()),
            iam: iam
        )
        let iamApplication = try server.iamApplication(port: 0)
        try await Application(router: server.router).test(.router) { api in
            try await iamApplication.test(.live) { client in
                let port = try #require(client.port)
                try await body(
                    Emulator(
                        driver: Self.driver,
                        roleAccount: Self.roleAccount,
                        client: client,
                        api: api,
                        base: "http://127.0.0.1:\(port)",
                        host: "127.0.0.1:\(port)"
                    )
                )
            }
        }
    }

    @Test("the stand-ins are not served on the API's port; another address than loopback is refused")
    func ownLoopbackListener() async throws {
        try await withEmulator { emulator in
            for path in [
                "/computeMetadata/v1/instance/service-accounts/default/token",
                "/v1/projects/-/serviceAccounts/\(emulator.driver.clientEmail):signJwt",
                "/service_accounts/v1/metadata/jwk/\(emulator.driver.clientEmail)",
            ] {
                try await emulator.api.execute(
                    uri: path,
                    method: path.contains(":sign") ? .post : .get,
                    headers: [.init("Metadata-Flavor")!: "Google"]
                ) { #expect($0.status == .notFound, "\(path)") }
            }
        }
        let server = try await EmulatorServer(
            trust: TrustConfiguration(serviceAccounts: []),
            store: try SQLiteFleetStore(inMemory: ()),
            iam: try await LocalIAM(keys: [Self.driver], signableAccounts: [])
        )
        for host in ["0.0.0.0", "192.0.2.1", "::", "127.0.0.1.example"] {
            #expect(throws: LocalIAMError.self, "\(host)") { _ = try server.iamApplication(host: host, port: 0) }
        }
        for host in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] {
            #expect(LocalIAM.isLoopback(host), "\(host)")
        }
        // An emulator built without the stand-ins has no IAM listener to start.
        let plain = try await EmulatorServer(
            trust: TrustConfiguration(serviceAccounts: []),
            store: try SQLiteFleetStore(inMemory: ())
        )
        #expect(throws: LocalIAMError.self) { _ = try plain.iamApplication(port: 0) }
        // Granting an account whose key is not held is a configuration error.
        await #expect(throws: LocalIAMError.self) {
            _ = try await LocalIAM(
                keys: [Self.driver],
                signableAccounts: ["nobody@demo-project.iam.gserviceaccount.com"]
            )
        }
    }

    @Test("signJwt and signBlob as a held account the runtime identity is not granted: 403 with IAM's error body")
    func notGranted() async throws {
        try await withEmulator { emulator in
            let email = emulator.roleAccount.clientEmail
            let now = Int64(Date().timeIntervalSince1970)
            for (method, payload) in [
                ("signJwt", #"{"payload":"{\"iss\":\"x\",\"exp\":\#(now + 600)}"}"#),
                ("signBlob", #"{"payload":"\#(Data("bytes".utf8).base64EncodedString())"}"#),
            ] {
                let (status, text) = try await emulator.sign(method, as: email, payload)
                #expect(status == .forbidden, "\(method)")
                let body = try StrictJSONParser().parseObject(Array(text.utf8))
                let error = try #require(body["error"]?.objectValue)
                #expect(error["status"] == "PERMISSION_DENIED")
                #expect(error["code"] == .integer(403))
                #expect(error["message"]?.stringValue?.contains("iam.serviceAccounts.\(method)") == true)
                #expect(body["signedJwt"] == nil && body["signedBlob"] == nil)
            }
            // Through FleetAuth's own IAM signer: a permission error, no token.
            let refused = await #expect(throws: SigningError.self) {
                _ = try await FleetEngineTokenMinter(signer: emulator.signer(emulator.roleAccount)).mint(.server)
            }
            #expect(refused?.code == .permissionDenied)
        }
    }

    @Test("a payload over the bound is refused by both sign methods")
    func payloadBound() async throws {
        try await withEmulator { emulator in
            let filler = String(repeating: "a", count: LocalIAM.maximumPayloadSize)
            let claims = #"{\"pad\":\"\#(filler)\"}"#
            let blob = Data(repeating: 7, count: LocalIAM.maximumPayloadSize + 1).base64EncodedString()
            for (method, payload) in [
                ("signJwt", #"{"payload":"\#(claims)"}"#), ("signBlob", #"{"payload":"\#(blob)"}"#),
            ] {
                let (status, text) = try await emulator.sign(method, as: emulator.driver.clientEmail, payload)
                #expect(status == .badRequest, "\(method)")
                #expect(text.contains("INVALID_ARGUMENT"))
            }
        }
    }

    @Test("a driver token minted through the emulator's signJwt is accepted by the emulator")
    func roundTrip() async throws {
        try await withEmulator { emulator in
            let token = try await FleetEngineTokenMinter(signer: emulator.signer()).mint(.driver(vehicleID: "v1"))
            #expect(token.keyID == emulator.driver.privateKeyID)
            let vehicle = "/v1/providers/demo-project/vehicles/v1"
            try await emulator.api.execute(
                uri: vehicle,
                method: .get,
                headers: [.authorization: "Bearer \(token.jwt)"]
            ) { response in
                #expect(response.status == .notFound)  // authenticated and authorized; the vehicle does not exist
            }
            try await emulator.api.execute(uri: vehicle, method: .get, headers: [.authorization: "Bearer x.y.z"]) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test("the metadata server needs Metadata-Flavor: Google and names its runtime account")
    func metadata() async throws {
        try await withEmulator { emulator in
            let path = "/computeMetadata/v1/instance/service-accounts/default"
            try await emulator.client.execute(uri: path + "/token", method: .get) { #expect($0.status == .forbidden) }
            try await emulator.client.execute(
                uri: path + "/email",
                method: .get,
                headers: [.init("Metadata-Flavor")!: "Google"]
            ) {
                #expect(String(buffer: $0.body).hasPrefix("fleetauth-runtime@demo-project"))
            }
        }
    }

    @Test("signJwt and signBlob need an access token the emulator issued, for an account it holds")
    func refusals() async throws {
        try await withEmulator { emulator in
            let sign = "/v1/projects/-/serviceAccounts/\(emulator.driver.clientEmail):signJwt"
            let body = ByteBuffer(string: #"{"payload":"{\"a\":1}"}"#)
            try await emulator.client.execute(uri: sign, method: .post, body: body) {
                #expect($0.status == .unauthorized)
            }
            try await emulator.client.execute(
                uri: sign,
                method: .post,
                headers: [.authorization: "Bearer ya29.forged"],
                body: body
            ) { #expect($0.status == .unauthorized) }
            let token = try await emulator.accessToken()
            let auth: HTTPFields = [.authorization: "Bearer \(token)"]
            // An account that does not exist gets the same 403 as one the runtime identity may not sign as, as
            // Google's IAM answers, so the answer tells no caller which accounts exist.
            try await emulator.client.execute(
                uri: "/v1/projects/-/serviceAccounts/nobody@demo-project.iam.gserviceaccount.com:signJwt",
                method: .post,
                headers: auth,
                body: body
            ) { response in
                #expect(response.status == .forbidden)
                let message = String(buffer: response.body)
                #expect(
                    message.contains(
                        "Permission 'iam.serviceAccounts.signJwt' denied on resource (or it may not exist)"
                    )
                )
            }
            let far = Int64(Date().timeIntervalSince1970) + 13 * 3600
            for payload in [
                #"{"payload":"not json"}"#, #"{"payload":"{\"exp\":\#(far)}"}"#, #"{"payload":"{\"exp\":1}"}"#,
            ] {
                try await emulator.client.execute(
                    uri: sign,
                    method: .post,
                    headers: auth,
                    body: ByteBuffer(string: payload)
                ) {
                    #expect($0.status == .badRequest, "\(payload)")
                }
            }
            let blob = "/v1/projects/-/serviceAccounts/\(emulator.driver.clientEmail):signBlob"
            let message = Array("bytes to sign".utf8)
            let payload = #"{"payload":"\#(Data(message).base64EncodedString())"}"#
            try await emulator.client.execute(
                uri: blob,
                method: .post,
                headers: auth,
                body: ByteBuffer(string: payload)
            ) {
                response in
                let object = try StrictJSONParser().parseObject(Array(buffer: response.body))
                let signature = try #require(object["signedBlob"]?.stringValue.flatMap { Data(base64Encoded: $0) })
                #expect(emulator.driver.verificationKey.isValidRS256Signature(Array(signature), for: message))
                #expect(object["keyId"]?.stringValue == emulator.driver.privateKeyID)
            }
        }
    }

    @Test("the account's public keys are served as a JWK set and as x509 certificates by kid")
    func publicKeys() async throws {
        try await withEmulator { emulator in
            let email = emulator.driver.clientEmail
            try await emulator.client.execute(uri: "/service_accounts/v1/metadata/jwk/\(email)", method: .get) {
                response in
                let keys = try JSONWebKeySet(json: Array(buffer: response.body)).verificationKeys()
                #expect(keys.map(\.keyID) == [emulator.driver.privateKeyID])
            }
            try await emulator.client.execute(uri: "/service_accounts/v1/metadata/x509/\(email)", method: .get) {
                response in
                let object = try StrictJSONParser().parseObject(Array(buffer: response.body))
                let pem = try #require(object[emulator.driver.privateKeyID]?.stringValue)
                #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
                let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
                let der = try #require(Data(base64Encoded: body))
                let spki = emulator.driver.verificationKey.subjectPublicKeyInfoDER
                #expect(Array(der).indices.contains { Array(der)[$0...].starts(with: spki) })
            }
            try await emulator.client.execute(uri: "/service_accounts/v1/metadata/jwk/x@y", method: .get) {
                #expect($0.status == .notFound)
            }
        }
    }
}
