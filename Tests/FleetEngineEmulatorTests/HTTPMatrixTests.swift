import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// The role × method matrix over REST (and, in ``GRPCTransportTests``, over gRPC) (rule A8 of the *Verification rules* article): every role × every RPC, with a token
/// signed by a service account holding only that role. Where the role grants the method's permission, a token
/// whose claim covers the resource succeeds and one whose claim does not is 403; where it does not, even the
/// covering token is 403 and names the permission. A denied call changes nothing in the store.
@Suite("HTTP role × method matrix")
struct HTTPMatrixTests {
    static let project = "demo-project"
    static let seedKey = try! TestKeys.keyNow(projectID: project, name: "seed")
    static let roleKeys: [String: ServiceAccountKey] = Dictionary(
        uniqueKeysWithValues: FleetEngineRole.all.map { role in
            (
                role.id,
                try! TestKeys.keyNow(projectID: project, name: DefaultProvisioning.accountName(for: role))
            )
        }
    )

    static var accounts: [(TrustedServiceAccount, [RSAVerificationKey])] {
        [
            (
                TrustedServiceAccount(email: seedKey.clientEmail, project: project, roles: [.serviceSuperUser]),
                [seedKey.verificationKey]
            )
        ]
            + FleetEngineRole.all.map { role in
                let key = roleKeys[role.id]!
                return (
                    TrustedServiceAccount(email: key.clientEmail, project: project, roles: [role]),
                    [key.verificationKey]
                )
            }
    }

    /// One RPC as a request, the claims that cover its resource and claims that do not.
    struct Call: Sendable {
        let method: FleetEngineMethod
        let httpMethod: HTTPRequest.Method
        let path: String
        let body: String?
        let covering: AuthorizationClaims
        let other: AuthorizationClaims
    }

    static let vehicles = "/v1/providers/demo-project/vehicles"
    static let trips = "/v1/providers/demo-project/trips"
    static let tripBody =
        #"{"tripType":"EXCLUSIVE","pickupPoint":{"point":{"latitude":37.4,"longitude":-122.1}},"dropoffPoint":{"point":{"latitude":37.5,"longitude":-122.2}}}"#
    static let search =
        #"{"pickupPoint":{"point":{"latitude":37.4,"longitude":-122.1}},"pickupRadiusMeters":5000,"count":5,"minimumCapacity":1,"tripTypes":["EXCLUSIVE"],"vehicleTypes":[{"category":"AUTO"}],"orderBy":"PICKUP_POINT_DISTANCE","tripId":"t1"}"#

    /// Seeded state: vehicles v1 (ONLINE, trip t1 assigned) and v2; trips t1 (on v1) and t2 (unassigned).
    static let calls: [Call] = [
        Call(
            method: .createVehicle,
            httpMethod: .post,
            path: "\(vehicles)?vehicleId=v3",
            body: EmulatorFixture.vehicleBody,
            covering: .init(vehicleID: "v3"),
            other: .init(vehicleID: "v2")
        ),
        Call(
            method: .getVehicle,
            httpMethod: .get,
            path: "\(vehicles)/v1",
            body: nil,
            covering: .init(vehicleID: "v1"),
            other: .init(vehicleID: "v2")
        ),
        Call(
            method: .updateVehicleLocation,
            httpMethod: .put,
            path: "\(vehicles)/v1?updateMask=last_location",
            body: #"{"lastLocation":{"location":{"latitude":37.41,"longitude":-122.11}}}"#,
            covering: .init(vehicleID: "v1"),
            other: .init(vehicleID: "v2")
        ),
        Call(
            method: .updateVehicle,
            httpMethod: .put,
            path: "\(vehicles)/v1?updateMask=maximum_capacity",
            body: #"{"maximumCapacity":6}"#,
            covering: .init(vehicleID: "v1"),
            other: .init(vehicleID: "v2")
        ),
        Call(
            method: .updateVehicleAttributes,
            httpMethod: .post,
            path: "\(vehicles)/v1:updateAttributes",
            body: #"{"attributes":[{"key":"color","value":"red"}]}"#,
            covering: .init(vehicleID: "v1"),
            other: .init(vehicleID: "v2")
        ),
        Call(
            method: .listVehicles,
            httpMethod: .get,
            path: "\(vehicles)?\(EmulatorFixture.autos)&pageSize=10",
            body: nil,
            covering: .init(vehicleID: "*"),
            other: .init(vehicleID: "v1")
        ),
        Call(
            method: .deleteVehicle,
            httpMethod: .delete,
            path: "\(vehicles)/v2",
            body: nil,
            covering: .init(vehicleID: "v2"),
            other: .init(vehicleID: "v1")
        ),
        Call(
            method: .searchVehicles,
            httpMethod: .post,
            path: "\(vehicles):search",
            body: search,
            covering: .init(tripID: "t1"),
            other: .init(tripID: "t2")
        ),
        Call(
            method: .createTrip,
            httpMethod: .post,
            path: "\(trips)?tripId=t3",
            body: tripBody,
            covering: .init(tripID: "t3"),
            other: .init(tripID: "t2")
        ),
        Call(
            method: .getTrip,
            httpMethod: .get,
            path: "\(trips)/t1",
            body: nil,
            covering: .init(tripID: "t1"),
            other: .init(tripID: "t2")
        ),
        Call(
            method: .updateTrip,
            httpMethod: .put,
            path: "\(trips)/t1?updateMask=dropoff_point",
            body: #"{"dropoffPoint":{"point":{"latitude":37.6,"longitude":-122.3}}}"#,
            covering: .init(tripID: "t1"),
            other: .init(tripID: "t2")
        ),
        Call(
            method: .updateTripState,
            httpMethod: .put,
            path: "\(trips)/t1?updateMask=trip_status",
            body: #"{"tripStatus":"ENROUTE_TO_PICKUP"}"#,
            covering: .init(tripID: "t1"),
            other: .init(tripID: "t2")
        ),
        Call(
            method: .deleteTrip,
            httpMethod: .delete,
            path: "\(trips)/t2",
            body: nil,
            covering: .init(tripID: "t2"),
            other: .init(tripID: "t1")
        ),
        Call(
            method: .searchTrips,
            httpMethod: .post,
            path: "\(trips):search",
            body: #"{"vehicleId":"v1"}"#,
            covering: .init(vehicleID: "v1"),
            other: .init(vehicleID: "v2")
        ),
        Call(
            method: .reportBillableTrip,
            httpMethod: .post,
            path: "/v1/providers/demo-project/billableTrips/t1:report",
            body: #"{"countryCode":"US"}"#,
            covering: .init(tripID: "*"),
            other: .init(tripID: "t1")
        ),
    ]

    struct Cell: Sendable, CustomTestStringConvertible {
        let role: FleetEngineRole
        let call: Call
        var testDescription: String {
            "\(role.id.replacingOccurrences(of: "roles/fleetengine.", with: "")) × \(call.method.name) "
                + "(\(call.method.permission))"
        }
    }

    static let cells = FleetEngineRole.all.flatMap { role in calls.map { Cell(role: role, call: $0) } }

    static func token(_ role: FleetEngineRole, _ claims: AuthorizationClaims) -> String {
        let key = roleKeys[role.id]!
        return try! FleetEngineTokenMinter(signer: LocalKeySigner(key: key)).mintSynchronously(.custom(claims)).jwt
    }

    /// Everything in the store, to prove a denied call wrote nothing.
    static func snapshot(_ store: SQLiteFleetStore) async throws -> String {
        let vehicles = try await store.vehicles(provider: project, afterID: nil, limit: 100)
        let trips = try await store.trips(
            provider: project,
            vehicleID: nil,
            activeOnly: false,
            afterID: nil,
            limit: 100
        )
        return vehicles.map { "\($0.id) \($0.vehicle)" }.joined(separator: "\n") + "\n"
            + trips.map { "\($0.id) \($0.updatedAt) \($0.trip)" }.joined(separator: "\n")
    }

    @Test("role × RPC over HTTP: one allowed and one denied request per cell", arguments: cells)
    func cell(_ cell: Cell) async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        let router = FleetEngineEmulator.makeRouter(
            authenticator: TokenAuthenticator(accounts: Self.accounts),
            store: store
        )
        try await Application(router: router).test(.router) { client in
            let seed = try FleetEngineTokenMinter(signer: LocalKeySigner(key: Self.seedKey)).mintSynchronously(.server)
                .jwt
            let vehicle = EmulatorFixture.vehicleBody.replacingOccurrences(of: "OFFLINE", with: "ONLINE")
            for request in [
                (HTTPRequest.Method.post, "\(Self.vehicles)?vehicleId=v1", vehicle),
                (.post, "\(Self.vehicles)?vehicleId=v2", vehicle),
                (.post, "\(Self.trips)?tripId=t1", Self.tripBody),
                (.post, "\(Self.trips)?tripId=t2", Self.tripBody),
                (.put, "\(Self.trips)/t1?updateMask=vehicle_id", #"{"vehicleId":"v1"}"#),
            ] {
                let (status, body) = try await client.call(request.0, request.1, token: seed, body: request.2)
                try #require(status == .ok, "seeding \(request.1): \(body.jsonText)")
            }
            let call = cell.call
            let before = try await Self.snapshot(store)
            func denied(_ claims: AuthorizationClaims) async throws -> String {
                let (status, body) = try await client.call(
                    call.httpMethod,
                    call.path,
                    token: Self.token(cell.role, claims),
                    body: call.body
                )
                #expect(status == .forbidden, "\(body.jsonText)")
                #expect(body["error"]?.objectValue?["status"] == "PERMISSION_DENIED")
                #expect(try await Self.snapshot(store) == before, "a denied call changed the store")
                return body["error"]?.objectValue?["message"]?.stringValue ?? ""
            }
            if cell.role.grants(call.method.permission), cell.role.ignoresAuthorizationClaims {
                // An admin role ignores the claims: claims for another resource do not narrow it.
                let (status, body) = try await client.call(
                    call.httpMethod,
                    call.path,
                    token: Self.token(cell.role, call.other),
                    body: call.body
                )
                #expect(status == .ok, "\(body.jsonText)")
            } else if cell.role.grants(call.method.permission) {
                _ = try await denied(call.other)
                let (status, body) = try await client.call(
                    call.httpMethod,
                    call.path,
                    token: Self.token(cell.role, call.covering),
                    body: call.body
                )
                #expect(status == .ok, "\(body.jsonText)")
            } else {
                let message = try await denied(call.covering)
                #expect(message.contains(call.method.permission.name), "\(message)")
            }
        }
    }
}
