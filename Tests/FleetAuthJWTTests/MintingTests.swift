import FleetAuthCore
import FleetAuthJWT
import FleetAuthTesting
import Foundation
import Testing

@Suite("Minting")
struct MintingTests {
    static let types: [FleetEngineTokenType] = [
        .server, try! .driver(vehicleID: "vehicle-1"), try! .driver(vehicleID: "*"), try! .consumer(tripID: "trip-1"),
        .deliveryServer, try! .deliveryConsumer(taskID: "task-1"), try! .deliveryConsumer(trackingID: "track-1"),
        try! .untrustedDeliveryDriver(deliveryVehicleID: "dv-1"),
        try! .trustedDeliveryDriver(deliveryVehicleID: "dv-1"),
        try! .trustedDeliveryDriver(deliveryVehicleID: "dv-1", taskID: "task-1"), .deliveryFleetReader, .fleetReader,
        try! .custom(.init(taskIDs: ["a", "b"])), try! .custom(.init(vehicleID: "v", tripID: "t")),
    ]

    @Test("mint → verify round trip for every token type", arguments: types)
    func roundTrip(_ type: FleetEngineTokenType) async throws {
        let minter = try FleetEngineTokenMinter(signer: LocalKeySigner(key: Fixtures.driverKey))
        let now = Date(timeIntervalSince1970: TimeInterval(Fixtures.now))
        let token = try await minter.mint(type, now: now)
        let verified = try Fixtures.verifier.verify(token.jwt, now: now)
        #expect(verified.claims == token.claims)
        #expect(verified.authorization == type.authorization)
        #expect(verified.keyID == Fixtures.kid)
    }

    @Test("header and claims are exactly what Fleet Engine expects, with integer times")
    func exactFormat() async throws {
        let minter = try FleetEngineTokenMinter(signer: LocalKeySigner(key: Fixtures.driverKey))
        let token = try await minter.mint(.driver(vehicleID: "v1"), now: Date(timeIntervalSince1970: 1_800_000_000.75))
        let parts = token.jwt.split(separator: ".")
        #expect(parts.count == 3)
        let header = String(decoding: Base64URL.decode(parts[0])!, as: UTF8.self)
        #expect(header == #"{"alg":"RS256","typ":"JWT","kid":"\#(Fixtures.kid)"}"#)
        let payload = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
        #expect(
            payload
                == #"{"iss":"\#(Fixtures.issuer)","sub":"\#(Fixtures.issuer)","aud":"https://fleetengine.googleapis.com/","iat":1800000000,"exp":1800003600,"authorization":{"vehicleid":"v1"}}"#
        )
        #expect(Base64URL.decode(parts[2])?.count == 256)
        #expect(token.endpointResponse().expirationTimestamp == 1_800_003_600_000)
    }

    @Test("lifetime, backdate and audience are configurable within Fleet Engine's limits")
    func configuration() async throws {
        let signer = LocalKeySigner(key: Fixtures.driverKey)
        let minter = try FleetEngineTokenMinter(
            signer: signer,
            configuration: .init(audience: "https://example.test/", lifetime: 1800, backdate: 300)
        )
        let token = try await minter.mint(.server, now: Date(timeIntervalSince1970: 1_000_000))
        #expect(token.claims.issuedAt == 999_700 && token.claims.expiresAt == 1_001_500)
        #expect(token.claims.audience == "https://example.test/")
        #expect(token.endpointResponse(now: 1_000_000).expiresInSeconds == 1500)

        expectCode(MintingError.invalidLifetime) {
            try FleetEngineTokenMinter(signer: signer, configuration: .init(lifetime: 3601))
        }
        expectCode(MintingError.invalidLifetime) {
            try FleetEngineTokenMinter(signer: signer, configuration: .init(lifetime: 0))
        }
        expectCode(MintingError.invalidBackdate) {
            try FleetEngineTokenMinter(signer: signer, configuration: .init(backdate: 601))
        }
        expectCode(MintingError.backdateExceedsLifetime) {
            try FleetEngineTokenMinter(signer: signer, configuration: .init(lifetime: 100, backdate: 100))
        }
        expectCode(MintingError.emptyAudience) {
            try FleetEngineTokenMinter(signer: signer, configuration: .init(audience: ""))
        }
    }

    struct KeylessSigner: RS256Signer {
        let key: ServiceAccountKey
        var serviceAccountEmail: String { key.clientEmail }
        var keyID: String? { nil }
        func sign(_ signingInput: [UInt8]) async throws -> [UInt8] {
            try LocalKeySigner(key: key).signSynchronously(signingInput)
        }
    }

    @Test("a signer without kid (IAM signBlob style) mints tokens the verifier checks against every issuer key")
    func noKeyID() async throws {
        let minter = try FleetEngineTokenMinter(signer: KeylessSigner(key: Fixtures.rotatedDriverKey))
        let now = Date(timeIntervalSince1970: TimeInterval(Fixtures.now))
        let token = try await minter.mint(.server, now: now)
        #expect(
            String(decoding: Base64URL.decode(token.jwt.split(separator: ".")[0])!, as: UTF8.self)
                == #"{"alg":"RS256","typ":"JWT"}"#
        )
        var store = TrustStore(serviceAccountKeys: [Fixtures.driverKey])
        expectCode(TokenVerificationError.invalidSignature) {
            try FleetEngineTokenVerifier(trustStore: store).verify(token.jwt, now: now)
        }
        store.add(Fixtures.rotatedDriverKey.verificationKey, issuer: Fixtures.issuer)
        let verified = try FleetEngineTokenVerifier(trustStore: store).verify(token.jwt, now: now)
        #expect(verified.keyID == Fixtures.rotatedDriverKey.privateKeyID)
    }
}
