import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// Every authorization rule of FleetAuthJWT's *Verification rules* article (A1–A7, A9) as HTTP calls against the emulator; A8 is
/// ``HTTPMatrixTests``.
@Suite("Authorization rows A1–A9 over HTTP")
struct AuthorizationRowsTests {
    typealias F = EmulatorFixture
    static let vehicles = "/v1/providers/demo-project/vehicles"
    static let trips = "/v1/providers/demo-project/trips"
    static let move = #"{"lastLocation":{"location":{"latitude":37.41,"longitude":-122.11}}}"#

    /// A token signed by `key` (with its `kid`) over an arbitrary `authorization` member (`nil` leaves it out).
    static func forge(authorization: String?, key: ServiceAccountKey = F.driverKey, iat: Int? = nil) -> String {
        let now = iat ?? Int(Date().timeIntervalSince1970)
        let header = #"{"alg":"RS256","typ":"JWT","kid":"\#(key.privateKeyID)"}"#
        var payload =
            #"{"iss":"\#(key.clientEmail)","sub":"\#(key.clientEmail)","aud":"https://fleetengine.googleapis.com/","iat":\#(now),"exp":\#(now + 3600)"#
        if let authorization { payload += #","authorization":\#(authorization)"# }
        payload += "}"
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let signature = try! LocalKeySigner(key: key).signSynchronously(Array(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    /// Seeds v1, v2 (server token) and trip t1 on v1, t2 unassigned; runs `body` with the client.
    static func withSeededEmulator(
        logger: Logger? = nil,
        _ body: @Sendable (any TestClientProtocol, SQLiteFleetStore) async throws -> Void
    ) async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: F.accounts),
            store: store
        )
        let application =
            logger.map { Application(router: router, logger: $0) } ?? Application(router: router)
        try await application.test(.router) { client in
            for (method, path, json) in [
                (HTTPRequest.Method.post, "\(vehicles)?vehicleId=v1", F.vehicleBody),
                (.post, "\(vehicles)?vehicleId=v2", F.vehicleBody),
                (.post, "\(trips)?tripId=t1", HTTPMatrixTests.tripBody),
                (.post, "\(trips)?tripId=t2", HTTPMatrixTests.tripBody),
                (.put, "\(trips)/t1?updateMask=vehicle_id", #"{"vehicleId":"v1"}"#),
            ] {
                let (status, _) = try await client.call(method, path, token: F.server, body: json)
                try #require(status == .ok)
            }
            try await body(client, store)
        }
    }

    @Test("A1: a driver token for v1 neither reads nor moves v2, nor touches v2's trips")
    func a1() async throws {
        try await Self.withSeededEmulator { client, store async throws in
            #expect(try await client.call(.get, "\(Self.vehicles)/v2", token: F.driver("v1")).0 == .forbidden)
            let before = try await store.vehicle(provider: "demo-project", id: "v2")
            #expect(
                try await client.call(
                    .put,
                    "\(Self.vehicles)/v2?updateMask=last_location",
                    token: F.driver("v1"),
                    body: Self.move
                ).0 == .forbidden
            )
            #expect(try await store.vehicle(provider: "demo-project", id: "v2") == before)
            #expect(try await client.call(.get, "\(Self.trips)/t1", token: F.driver("v2")).0 == .forbidden)
            #expect(try await client.call(.get, "\(Self.trips)/t1", token: F.driver("v1")).0 == .ok)
        }
    }

    @Test("A2: a consumer token for t1 cannot read t2 or update any vehicle")
    func a2() async throws {
        try await Self.withSeededEmulator { client, _ async throws in
            #expect(try await client.call(.get, "\(Self.trips)/t2", token: F.consumer("t1")).0 == .forbidden)
            #expect(try await client.call(.get, "\(Self.trips)/t1", token: F.consumer("t1")).0 == .ok)
            #expect(
                try await client.call(
                    .put,
                    "\(Self.vehicles)/v1?updateMask=last_location",
                    token: F.consumer("t1"),
                    body: Self.move
                ).0 == .forbidden
            )
        }
    }

    @Test("A3: a token of project A on providers/B is 403, both ways")
    func a3() async throws {
        try await Self.withSeededEmulator { client, _ async throws in
            let other = F.token(F.otherProjectKey, .server)
            let (status, body) = try await client.call(.get, "\(Self.vehicles)/v1", token: other)
            #expect(status == .forbidden)
            #expect(body["error"]?.objectValue?["message"]?.stringValue?.contains("project") == true)
            #expect(
                try await client.call(.get, "/v1/providers/other-project/vehicles/v1", token: F.server).0 == .forbidden
            )
        }
    }

    @Test(
        "A4/A5: malformed authorization claims are 401; a missing one is 403 'no scopes'",
        arguments: [
            (nil, 403),
            (#""v1""#, 401),
            (#"["v1"]"#, 401),
            (#"{"vehicleid":["v1"]}"#, 401),
            (#"{"vehicleid":1}"#, 401),
            (#"{"VehicleId":"v1"}"#, 401),
            (#"{"vehicleid":"v1","role":"admin"}"#, 401),
            (#"{"vehicleid":""}"#, 401),
            (#"{"taskids":["*","t1"]}"#, 401),
            (#"{"taskids":"*"}"#, 401),
            (#"{"vehicleid":"v1"}"#, 200),
        ] as [(String?, Int)]
    )
    func a4(_ authorization: String?, _ expected: Int) async throws {
        try await Self.withSeededEmulator { client, _ async throws in
            let token = Self.forge(authorization: authorization)
            let (status, body) = try await client.call(.get, "\(Self.vehicles)/v1", token: token)
            #expect(Int(status.code) == expected, "\(body.jsonText)")
            if expected == 403 {
                #expect(body["error"]?.objectValue?["message"] == "JWT does not contain any scopes.")
            }
        }
    }

    @Test("A5: \"*\" matches every resource, but only within the signing account's role")
    func a5() async throws {
        try await Self.withSeededEmulator { client, _ async throws in
            let wildcard = Self.forge(authorization: #"{"vehicleid":"*"}"#)
            #expect(try await client.call(.get, "\(Self.vehicles)/v2", token: wildcard).0 == .ok)
            // The driver role has no vehicles.create or vehicles.list, wildcard or not.
            #expect(
                try await client.call(.post, "\(Self.vehicles)?vehicleId=v9", token: wildcard, body: F.vehicleBody).0
                    == .forbidden
            )
            #expect(try await client.call(.get, "\(Self.vehicles)?\(F.autos)", token: wildcard).0 == .forbidden)
        }
    }

    @Test(
        "A6: path IDs are compared byte for byte with the claim, never normalized",
        arguments: ["v1%2F..", "v1%2F..%2Fv2", "v1%20", "%20v1", "v1%00", "V1", "v%E2%80%8B1", "%EF%BD%961", "v1%3A"]
    )
    func a6(_ path: String) async throws {
        try await Self.withSeededEmulator { client, store async throws in
            let before = try await store.vehicle(provider: "demo-project", id: "v1")
            let (read, readBody) = try await client.call(.get, "\(Self.vehicles)/\(path)", token: F.driver("v1"))
            #expect([400, 403, 404].contains(read.code), "GET \(path): \(read) \(readBody.jsonText)")
            let (write, _) = try await client.call(
                .put,
                "\(Self.vehicles)/\(path)?updateMask=last_location",
                token: F.driver("v1"),
                body: Self.move
            )
            #expect([400, 403, 404].contains(write.code), "PUT \(path): \(write)")
            #expect(try await store.vehicle(provider: "demo-project", id: "v1") == before)
        }
        // Dot segments are not resolved: /vehicles/v2/../v1 is no route, not v1.
        try await Self.withSeededEmulator { client, _ async throws in
            #expect(try await client.call(.get, "\(Self.vehicles)/v2/../v1", token: F.driver("v1")).0 != .ok)
        }
    }

    @Test("A7: the role comes from the signing account; a consumer account's token claiming vehicles gains nothing")
    func a7() async throws {
        try await Self.withSeededEmulator { client, store async throws in
            let consumerAsDriver = Self.forge(authorization: #"{"vehicleid":"v1"}"#, key: F.consumerKey)
            let (status, body) = try await client.call(
                .put,
                "\(Self.vehicles)/v1?updateMask=last_location",
                token: consumerAsDriver,
                body: Self.move
            )
            #expect(status == .forbidden)
            #expect(body["error"]?.objectValue?["message"]?.stringValue?.contains("vehicles.updateLocation") == true)
            let consumerAsServer = Self.forge(authorization: #"{"vehicleid":"*","tripid":"*"}"#, key: F.consumerKey)
            #expect(
                try await client.call(
                    .post,
                    "\(Self.vehicles)?vehicleId=v9",
                    token: consumerAsServer,
                    body: F.vehicleBody
                )
                .0 == .forbidden
            )
            #expect(try await client.call(.get, "\(Self.vehicles)?\(F.autos)", token: consumerAsServer).0 == .forbidden)
            #expect(try await store.vehicle(provider: "demo-project", id: "v9") == nil)
        }
    }

    @Test("A9: bad signature, unknown kid, unknown issuer and expiry answer byte-identical bodies; no token in logs")
    func a9() async throws {
        let records = LogRecorder()
        try await Self.withSeededEmulator(logger: .recording(to: records)) { client, _ async throws in
            let good = F.driver("v1")
            var signature = Array(good.split(separator: ".")[2].utf8)
            signature[10] = signature[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let badSignature =
                good.split(separator: ".")[0...1].joined(separator: ".") + "."
                + String(decoding: signature, as: UTF8.self)
            let stranger = try TestKeys.keyNow(projectID: "demo-project", name: "driver")
            let unknownKid = Self.forge(authorization: #"{"vehicleid":"v1"}"#, key: stranger)
            let unknownIssuer = Self.forge(
                authorization: #"{"vehicleid":"v1"}"#,
                key: try TestKeys.keyNow(projectID: "demo-project", name: "nobody")
            )
            let expired = Self.forge(
                authorization: #"{"vehicleid":"v1"}"#,
                iat: Int(Date().timeIntervalSince1970) - 7200
            )
            var bodies: Set<String> = []
            for token in [badSignature, unknownKid, unknownIssuer, expired, "not-a-jwt"] {
                try await client.execute(
                    uri: "\(Self.vehicles)/v1",
                    method: .get,
                    headers: [.authorization: "Bearer \(token)"]
                ) { response in
                    #expect(response.status == .unauthorized)
                    let text = String(buffer: response.body)
                    #expect(!text.contains(token))
                    bodies.insert(text)
                }
            }
            #expect(bodies.count == 1, "\(bodies)")
            #expect(try await client.call(.get, "\(Self.vehicles)/v1", token: good).0 == .ok)
            for line in records.lines {
                for token in [good, badSignature, unknownKid, expired] {
                    #expect(
                        !line.contains(String(token.split(separator: ".")[2])),
                        "a log line echoes a token: \(line)"
                    )
                }
            }
        }
    }
}
