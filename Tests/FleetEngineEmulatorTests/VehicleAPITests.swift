import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Service accounts, tokens and an in-process emulator for HTTP-level tests.
struct EmulatorFixture {
    static let project = "demo-project"
    static let serverKey = try! TestKeys.keyNow(projectID: project, name: "server")
    static let driverKey = try! TestKeys.keyNow(projectID: project, name: "driver")
    static let consumerKey = try! TestKeys.keyNow(projectID: project, name: "consumer")
    static let otherProjectKey = try! TestKeys.keyNow(projectID: "other-project", name: "server")
    static let adminKey = try! TestKeys.keyNow(projectID: project, name: "admin")

    static let accounts: [(TrustedServiceAccount, [RSAVerificationKey])] = [
        (
            TrustedServiceAccount(email: serverKey.clientEmail, project: project, roles: [.serviceSuperUser]),
            [serverKey.verificationKey]
        ),
        (
            TrustedServiceAccount(email: driverKey.clientEmail, project: project, roles: [.driverSdkUser]),
            [driverKey.verificationKey]
        ),
        (
            TrustedServiceAccount(email: consumerKey.clientEmail, project: project, roles: [.consumerSdkUser]),
            [consumerKey.verificationKey]
        ),
        (
            TrustedServiceAccount(
                email: otherProjectKey.clientEmail,
                project: "other-project",
                roles: [.serviceSuperUser]
            ),
            [otherProjectKey.verificationKey]
        ),
        (
            TrustedServiceAccount(email: adminKey.clientEmail, project: project, roles: [.ondemandAdmin]),
            [adminKey.verificationKey]
        ),
    ]

    let store: SQLiteFleetStore
    let application: Application<RouterResponder<EmulatorRequestContext>>

    init() throws {
        store = try SQLiteFleetStore(inMemory: ())
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: Self.accounts),
            store: store
        )
        application = Application(router: router)
    }

    static func token(_ key: ServiceAccountKey, _ type: FleetEngineTokenType) -> String {
        try! FleetEngineTokenMinter(signer: LocalKeySigner(key: key)).mintSynchronously(type).jwt
    }

    static let server = token(serverKey, .server)
    static func driver(_ vehicle: String) -> String { token(driverKey, try! .driver(vehicleID: vehicle)) }
    static func consumer(_ trip: String) -> String { token(consumerKey, try! .consumer(tripID: trip)) }

    static let vehicleBody =
        #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#

    /// ListVehicles' required `vehicleTypeCategories`, naming the category of ``vehicleBody``.
    static let autos = "vehicleTypeCategories=AUTO"
}

extension TestClientProtocol {
    /// Sends a request with a bearer token and JSON body; returns status and parsed JSON.
    func call(_ method: HTTPRequest.Method, _ uri: String, token: String?, body: String? = nil) async throws -> (
        HTTPResponse.Status, JSONObject
    ) {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        if body != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        { response in
            let bytes = Array(response.body.readableBytesView)
            let object = bytes.isEmpty ? JSONObject() : (try? StrictJSONParser().parseObject(bytes)) ?? JSONObject()
            return (response.status, object)
        }
    }
}

@Suite("Vehicle API")
struct VehicleAPITests {
    typealias F = EmulatorFixture
    let base = "/v1/providers/demo-project/vehicles"

    @Test("create, get, update location, list and delete a vehicle")
    func lifecycle() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            let (created, vehicle) = try await client.call(
                .post,
                "\(base)?vehicleId=v1",
                token: F.server,
                body: F.vehicleBody
            )
            #expect(created == .ok)
            #expect(vehicle["name"] == "providers/demo-project/vehicles/v1")
            #expect(vehicle["vehicleState"] == "OFFLINE")
            #expect(vehicle["currentTrips"] == nil, "empty repeated fields are left out, as proto3 JSON does")

            let (got, same) = try await client.call(.get, "\(base)/v1", token: F.driver("v1"))
            #expect(got == .ok && same == vehicle)

            let location =
                #"{"lastLocation":{"location":{"latitude":37.42,"longitude":-122.08},"heading":90},"vehicleState":"ONLINE"}"#
            let (updated, moved) = try await client.call(
                .put,
                "\(base)/v1?updateMask=last_location,vehicleState",
                token: F.driver("v1"),
                body: location
            )
            #expect(updated == .ok)
            #expect(moved["vehicleState"] == "ONLINE")
            #expect(moved["lastLocation"]?.objectValue?["location"] == ["latitude": 37.42, "longitude": -122.08])
            #expect(moved["lastLocation"]?.objectValue?["serverTime"]?.stringValue != nil)
            // Fields outside the mask are untouched.
            #expect(moved["maximumCapacity"] == 4)

            _ = try await client.call(.post, "\(base)?vehicleId=v2", token: F.server, body: F.vehicleBody)
            let (listed, page) = try await client.call(.get, "\(base)?\(F.autos)&pageSize=1", token: F.server)
            #expect(listed == .ok)
            #expect(page["vehicles"]?.arrayValue?.count == 1)
            let token = try #require(page["nextPageToken"]?.stringValue)
            let (_, rest) = try await client.call(
                .get,
                "\(base)?\(F.autos)&pageSize=1&pageToken=\(token)",
                token: F.server
            )
            #expect(rest["vehicles"]?.arrayValue?.first?.objectValue?["name"] == "providers/demo-project/vehicles/v2")
            #expect(rest["nextPageToken"] == nil)

            let (deleted, _) = try await client.call(.delete, "\(base)/v2", token: F.server)
            #expect(deleted == .ok)
            let (missing, error) = try await client.call(.get, "\(base)/v2", token: F.server)
            #expect(missing == .notFound)
            #expect(error["error"]?.objectValue?["status"] == "NOT_FOUND")
        }
    }

    @Test(
        "an On-demand Admin's token acts on any vehicle whatever its claims, or with none; a super user's is narrowed"
    )
    func adminIgnoresClaims() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            let narrowed = F.token(F.adminKey, try .driver(vehicleID: "someone-else"))
            let (created, _) = try await client.call(
                .post,
                "\(base)?vehicleId=v1",
                token: narrowed,
                body: F.vehicleBody
            )
            #expect(created == .ok)
            let claimless = try AuthenticationTests.claimless(F.adminKey, at: Date())
            let (got, vehicle) = try await client.call(.get, "\(base)/v1", token: claimless)
            #expect(got == .ok)
            #expect(vehicle["name"] == "providers/demo-project/vehicles/v1")
            let (listed, page) = try await client.call(.get, "\(base)?\(F.autos)", token: narrowed)
            #expect(listed == .ok)
            #expect(page["vehicles"]?.arrayValue?.count == 1)
            // The provider is still the account's project.
            let (otherProvider, _) = try await client.call(
                .get,
                "/v1/providers/other-project/vehicles/v1",
                token: narrowed
            )
            #expect(otherProvider == .forbidden)
            // A Service Super User's token is narrowed by its claims, and needs them.
            let superUser = F.token(F.serverKey, try .driver(vehicleID: "someone-else"))
            let (narrowedRead, _) = try await client.call(.get, "\(base)/v1", token: superUser)
            #expect(narrowedRead == .forbidden)
            let (noScopes, body) = try await client.call(
                .get,
                "\(base)/v1",
                token: try AuthenticationTests.claimless(F.serverKey, at: Date())
            )
            #expect(noScopes == .forbidden)
            #expect(body["error"]?.objectValue?["message"] == "JWT does not contain any scopes.")
        }
    }

    @Test("token problems are 401 with Google's body; role, claim and provider problems are 403; nothing is written")
    func authorizationFailures() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            let (noToken, body) = try await client.call(.post, "\(base)?vehicleId=v1", token: nil, body: F.vehicleBody)
            #expect(noToken == .unauthorized)
            #expect(body["error"]?.objectValue?["status"] == "UNAUTHENTICATED")
            #expect(body["error"]?.objectValue?["code"] == 401)
            let (forged, _) = try await client.call(
                .post,
                "\(base)?vehicleId=v1",
                token: F.server + "x",
                body: F.vehicleBody
            )
            #expect(forged == .unauthorized)
            // Role: a driver cannot create vehicles, even its own.
            let (driverCreate, denied) = try await client.call(
                .post,
                "\(base)?vehicleId=v1",
                token: F.driver("v1"),
                body: F.vehicleBody
            )
            #expect(driverCreate == .forbidden)
            #expect(denied["error"]?.objectValue?["status"] == "PERMISSION_DENIED")
            // Provider: a server token of another project.
            let otherServer = F.token(F.otherProjectKey, .server)
            let (otherProject, _) = try await client.call(
                .post,
                "\(base)?vehicleId=v1",
                token: otherServer,
                body: F.vehicleBody
            )
            #expect(otherProject == .forbidden)
            #expect(try await fixture.store.vehicle(provider: "demo-project", id: "v1") == nil)

            _ = try await client.call(.post, "\(base)?vehicleId=v1", token: F.server, body: F.vehicleBody)
            // Claim: a driver token for v2 reads or moves v1.
            let (wrongVehicle, _) = try await client.call(.get, "\(base)/v1", token: F.driver("v2"))
            #expect(wrongVehicle == .forbidden)
            let (wrongMove, _) = try await client.call(
                .put,
                "\(base)/v1?updateMask=lastLocation",
                token: F.driver("v2"),
                body: #"{"lastLocation":{"location":{"latitude":1,"longitude":1}}}"#
            )
            #expect(wrongMove == .forbidden)
            // Driver masks outside the driver-reportable set are refused, and nothing changes.
            let (capacity, _) = try await client.call(
                .put,
                "\(base)/v1?updateMask=maximum_capacity",
                token: F.driver("v1"),
                body: #"{"maximumCapacity":9}"#
            )
            #expect(capacity == .forbidden)
            let (attributes, _) = try await client.call(
                .put,
                "\(base)/v1?updateMask=attributes",
                token: F.driver("v1"),
                body: #"{"attributes":[{"key":"a","value":"b"}]}"#
            )
            #expect(attributes == .forbidden)
            #expect(try await fixture.store.vehicle(provider: "demo-project", id: "v1")?.maximumCapacity == 4)
            // A consumer token cannot list vehicles or move them.
            let (consumerList, _) = try await client.call(.get, "\(base)?\(F.autos)", token: F.consumer("t1"))
            #expect(consumerList == .forbidden)
        }
    }

    @Test(
        "bad input is INVALID_ARGUMENT naming the field",
        arguments: [
            ("?vehicleId=", F.vehicleBody, "vehicleId is required"),
            ("?vehicleId=a%2Fb", F.vehicleBody, "must not contain '/'"),
            ("?vehicleId=\(String(repeating: "x", count: 65))", F.vehicleBody, "at most 64"),
            (
                "?vehicleId=v1", #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4}"#,
                "vehicle.vehicleType is required"
            ),
            (
                "?vehicleId=v1",
                #"{"vehicleState":"PARKED","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#,
                "vehicle.vehicleState"
            ),
            (
                "?vehicleId=v1",
                #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":0,"vehicleType":{"category":"AUTO"}}"#,
                "vehicle.maximumCapacity"
            ),
            (
                "?vehicleId=v1",
                #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"},"colour":"red"}"#,
                "Unknown name \"colour\""
            ),
            (
                "?vehicleId=v1",
                #"{"vehicleState":"OFFLINE","supportedTripTypes":[],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#,
                "supportedTripTypes"
            ),
            (
                "?vehicleId=v1",
                #"{"vehicleState":"OFFLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"},"lastLocation":{"location":{"latitude":91,"longitude":0}}}"#,
                "vehicle.lastLocation.location.latitude"
            ),
            ("?vehicleId=v1", #"{"vehicleState":"OFFLINE","vehicleState":"ONLINE"}"#, "Invalid JSON payload"),
        ]
    )
    func invalidCreate(_ query: String, _ body: String, _ phrase: String) async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            let (status, error) = try await client.call(.post, base + query, token: F.server, body: body)
            #expect(status == .badRequest)
            #expect(error["error"]?.objectValue?["status"] == "INVALID_ARGUMENT")
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains(phrase) == true, "\(error.jsonText)")
        }
        #expect(try await fixture.store.vehicles(provider: "demo-project", afterID: nil, limit: 10).isEmpty)
    }

    @Test("duplicates, missing masks, immutable and unknown mask paths")
    func conflictsAndMasks() async throws {
        let fixture = try F()
        try await fixture.application.test(.router) { client in
            _ = try await client.call(.post, "\(base)?vehicleId=v1", token: F.server, body: F.vehicleBody)
            let (duplicate, body) = try await client.call(
                .post,
                "\(base)?vehicleId=v1",
                token: F.server,
                body: F.vehicleBody
            )
            #expect(duplicate == .conflict && body["error"]?.objectValue?["status"] == "ALREADY_EXISTS")
            for (query, phrase) in [
                ("", "updateMask is required"), ("?updateMask=", "at least one"),
                ("?updateMask=current_trips", "cannot be updated"), ("?updateMask=name", "cannot be updated"),
                ("?updateMask=colour", "not a Vehicle field"),
                // Case is mapped in ASCII only: a non-ASCII capital never becomes a known path.
                ("?updateMask=l%C3%80st_location", "not a Vehicle field"),
                ("?updateMask=vehicle%C3%80State", "not a Vehicle field"),
                ("?updateMask=currentTrips", "cannot be updated"), ("?updateMask=%20name", "cannot be updated"),
                ("?updateMask=maximumCapacity,%2C", "without empty paths"),
            ] {
                let (status, error) = try await client.call(
                    .put,
                    "\(base)/v1\(query)",
                    token: F.server,
                    body: #"{"vehicleState":"ONLINE"}"#
                )
                #expect(status == .badRequest, "\(query)")
                #expect(
                    error["error"]?.objectValue?["message"]?.stringValue?.contains(phrase) == true,
                    "\(query): \(error.jsonText)"
                )
            }
            let (missing, _) = try await client.call(
                .put,
                "\(base)/nope?updateMask=vehicle_state",
                token: F.server,
                body: #"{"vehicleState":"ONLINE"}"#
            )
            #expect(missing == .notFound)
            // A server token may update any field, in either spelling, with spaces around a path.
            let (ok, vehicle) = try await client.call(
                .put,
                "\(base)/v1?updateMask=maximumCapacity,%20attributes%20",
                token: F.server,
                body: #"{"maximumCapacity":6,"attributes":[{"key":"colour","value":"red"}]}"#
            )
            #expect(ok == .ok && vehicle["maximumCapacity"] == 6)
            #expect(vehicle["attributes"]?.arrayValue?.count == 1)
            let (camel, moved) = try await client.call(
                .put,
                "\(base)/v1?updateMask=backToBackEnabled,remainingDistanceMeters",
                token: F.server,
                body: #"{"backToBackEnabled":true,"remainingDistanceMeters":75}"#
            )
            #expect(
                camel == .ok && moved["remainingDistanceMeters"] == 75 && moved["backToBackEnabled"] == true,
                "\(moved.jsonText)"
            )
        }
    }
}

@Suite("Server times")
struct ServerTimeTests {
    @Test(
        "lastLocation.serverTime is the server's time to the millisecond, in the proto3 JSON form of a Timestamp",
        arguments: [1_800_000_000.1234, 0, -1.5, 951_782_400.999, 4_102_444_799.0005]
    )
    func serverTime(_ seconds: Double) async throws {
        let date = Date(timeIntervalSince1970: seconds)
        let store = try SQLiteFleetStore(inMemory: ())
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: EmulatorFixture.accounts),
            store: store,
            clock: ManualClock(date: date)
        )
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let milliseconds = (seconds * 1000).rounded(.down) / 1000
        // The proto3 JSON mapping writes 0, 3, 6 or 9 fractional digits: none for whole seconds.
        let expected = reference.string(from: Date(timeIntervalSince1970: milliseconds))
            .replacingOccurrences(of: ".000Z", with: "Z")
        try await Application(router: router).test(.router) { client in
            let body = EmulatorFixture.vehicleBody.replacingOccurrences(
                of: #""maximumCapacity":4"#,
                with: #""maximumCapacity":4,"lastLocation":{"location":{"latitude":1,"longitude":2}}"#
            )
            let (status, vehicle) = try await client.call(
                .post,
                "/v1/providers/demo-project/vehicles?vehicleId=v1",
                token: EmulatorFixture.server,
                body: body
            )
            #expect(status == .ok)
            #expect(vehicle["lastLocation"]?.objectValue?["serverTime"]?.stringValue == expected)
        }
    }
}
