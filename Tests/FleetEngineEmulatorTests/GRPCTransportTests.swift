import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import Hummingbird
import HummingbirdTesting
import SwiftProtobuf
import Testing

@testable import FleetEngineEmulator

/// `maps.fleetengine.v1` over gRPC against a live server on loopback: the same RPCs, authentication, policy and
/// store as REST, the canonical status and the same message for every failure, and the same messages.
@Suite("gRPC transport")
struct GRPCTransportTests {
    typealias F = EmulatorFixture
    static let v1 = "\(GRPCEmulator.provider)/vehicles/v1"

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("a dispatcher, a driver and a consumer over gRPC; what gRPC writes REST reads, and the reverse")
    func lifecycle() async throws {
        try await GRPCEmulator.with { emulator in
            let server = bearer(F.server, resource: GRPCEmulator.provider)
            let created = try await emulator.vehicles.createVehicle(
                Requests.createVehicle("v1", Requests.vehicle(state: .online)),
                metadata: server
            )
            #expect(created.name == Self.v1)
            #expect(created.vehicleState == .online)

            // The driver reports a location with its own token; REST reads it back.
            let moved = try await emulator.vehicles.updateVehicle(
                Requests.move("v1", to: 37.41, -122.11),
                metadata: bearer(F.driver("v1"), resource: Self.v1)
            )
            #expect(moved.lastLocation.location.latitude == 37.41)
            #expect(moved.lastLocation.hasServerTime)
            let (status, rest) = try await emulator.rest.call(
                .get,
                "/v1/\(Self.v1)",
                token: F.driver("v1")
            )
            #expect(status == .ok)
            #expect(try FleetEngineV1.Vehicle(restJSON: rest) == moved)

            // A trip created over REST is assigned over gRPC and read by its consumer over gRPC.
            let (tripStatus, _) = try await emulator.rest.call(
                .post,
                "/v1/\(GRPCEmulator.provider)/trips?tripId=t1",
                token: F.server,
                body: HTTPMatrixTests.tripBody
            )
            #expect(tripStatus == .ok)
            var assignment = FleetEngineV1.Trip()
            assignment.vehicleID = "v1"
            _ = try await emulator.trips.updateTrip(
                Requests.updateTrip("t1", assignment, mask: ["vehicle_id"]),
                metadata: server
            )
            let seen = try await emulator.trips.getTrip(Requests.getTrip("t1"), metadata: bearer(F.consumer("t1")))
            #expect(seen.vehicleID == "v1")
            #expect(seen.tripStatus == .new)
            let vehicle = try await emulator.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: server)
            #expect(vehicle.currentTrips == ["t1"])
            #expect(vehicle.waypoints.map(\.tripID) == ["t1", "t1"])

            // Dispatch queries.
            var list = FleetEngineV1.ListVehiclesRequest()
            list.parent = GRPCEmulator.provider
            list.vehicleTypeCategories = [.auto]
            list.vehicleState = .online
            let listed = try await emulator.vehicles.listVehicles(list, metadata: server)
            #expect(listed.vehicles.map(\.name) == [Self.v1])
            #expect(listed.totalSize == 1)
            var searchTrips = FleetEngineV1.SearchTripsRequest()
            searchTrips.parent = GRPCEmulator.provider
            searchTrips.vehicleID = "v1"
            searchTrips.activeTripsOnly = true
            let trips = try await emulator.trips.searchTrips(searchTrips, metadata: bearer(F.driver("v1")))
            #expect(trips.trips.map(\.name) == ["\(GRPCEmulator.provider)/trips/t1"])

            // The trip ends; the vehicle is deleted over gRPC and gone over REST.
            var done = FleetEngineV1.Trip()
            done.tripStatus = .complete
            _ = try await emulator.trips.updateTrip(
                Requests.updateTrip("t1", done, mask: ["trip_status"]),
                metadata: server
            )
            var report = FleetEngineV1.ReportBillableTripRequest()
            report.name = "\(GRPCEmulator.provider)/billableTrips/t1"
            report.countryCode = "US"
            _ = try await emulator.trips.reportBillableTrip(report, metadata: server)
            var deleteTrip = FleetEngineV1.DeleteTripRequest()
            deleteTrip.name = "\(GRPCEmulator.provider)/trips/t1"
            _ = try await emulator.trips.deleteTrip(deleteTrip, metadata: server)
            var delete = FleetEngineV1.DeleteVehicleRequest()
            delete.name = Self.v1
            _ = try await emulator.vehicles.deleteVehicle(delete, metadata: server)
            #expect(try await emulator.rest.call(.get, "/v1/\(Self.v1)", token: F.server).0 == .notFound)
        }
    }

    /// One failure of each kind, over REST and over gRPC: the gRPC code is the REST status's, with its message.
    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        /// The gRPC code, as `RPCError.Code` describes itself (`permissionDenied`).
        let code: String
        let rest: (HTTPRequest.Method, String, String?, String?)
        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(name: "no token", code: "unauthenticated", rest: (.get, "/v1/\(v1)", nil, nil)),
        Failure(
            name: "a token that does not verify",
            code: "unauthenticated",
            rest: (.get, "/v1/\(v1)", "not-a-jwt", nil)
        ),
        Failure(
            name: "a driver token for another vehicle",
            code: "permissionDenied",
            rest: (.get, "/v1/\(v1)", F.driver("v2"), nil)
        ),
        Failure(
            name: "a malformed resource name",
            code: "invalidArgument",
            rest: (.get, "/v1/providers/demo-project/vehicles/%20v1", F.server, nil)
        ),
        Failure(
            name: "a missing vehicle",
            code: "notFound",
            rest: (.get, "/v1/\(GRPCEmulator.provider)/vehicles/v9", F.server, nil)
        ),
        Failure(
            name: "a vehicle that exists",
            code: "alreadyExists",
            rest: (.post, "/v1/\(GRPCEmulator.provider)/vehicles?vehicleId=v1", F.server, F.vehicleBody)
        ),
        Failure(
            name: "deleting a trip still assigned",
            code: "failedPrecondition",
            rest: (.delete, "/v1/\(GRPCEmulator.provider)/trips/t1", F.server, nil)
        ),
        Failure(
            name: "an update without a mask",
            code: "invalidArgument",
            rest: (.put, "/v1/\(v1)", F.server, #"{"maximumCapacity":6}"#)
        ),
    ]

    /// The gRPC twin of each failure, by name.
    @available(FleetAuthGRPC, *)
    static let grpcFailures: [String: @Sendable (GRPCEmulator) async throws -> Void] = [
        "no token": { _ = try await $0.vehicles.getVehicle(Requests.getVehicle("v1")) },
        "a token that does not verify": {
            _ = try await $0.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: bearer("not-a-jwt"))
        },
        "a driver token for another vehicle": {
            _ = try await $0.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: bearer(F.driver("v2")))
        },
        "a malformed resource name": {
            _ = try await $0.vehicles.getVehicle(Requests.getVehicle(" v1"), metadata: bearer(F.server))
        },
        "a missing vehicle": {
            _ = try await $0.vehicles.getVehicle(Requests.getVehicle("v9"), metadata: bearer(F.server))
        },
        "a vehicle that exists": {
            _ = try await $0.vehicles.createVehicle(Requests.createVehicle("v1"), metadata: bearer(F.server))
        },
        "deleting a trip still assigned": {
            var request = FleetEngineV1.DeleteTripRequest()
            request.name = "\(GRPCEmulator.provider)/trips/t1"
            _ = try await $0.trips.deleteTrip(request, metadata: bearer(F.server))
        },
        "an update without a mask": {
            var vehicle = FleetEngineV1.Vehicle()
            vehicle.maximumCapacity = 6
            _ = try await $0.vehicles.updateVehicle(
                Requests.updateVehicle("v1", vehicle, mask: []),
                metadata: bearer(F.server)
            )
        },
    ]

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test(
        "each failure is the canonical gRPC status of the REST answer, with the same message; nothing changes",
        arguments: failures
    )
    func failure(_ failure: Failure) async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            let before = try await HTTPMatrixTests.snapshot(emulator.store)
            let (method, path, token, body) = failure.rest
            let (status, rest) = try await emulator.rest.call(method, path, token: token, body: body)
            let restError = try #require(rest["error"]?.objectValue)
            let grpc = try #require(Self.grpcFailures[failure.name])
            let error = try #require(await rpcError { try await grpc(emulator) })
            #expect("\(error.code)" == failure.code)
            #expect(restError["status"]?.stringValue == failure.code.uppercasedSnake)
            #expect(Int(restError["code"]?.numberValue ?? 0) == Int(status.code))
            #expect(error.message == restError["message"]?.stringValue)
            #expect(try await HTTPMatrixTests.snapshot(emulator.store) == before)
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("a request message over 1 MiB is RESOURCE_EXHAUSTED, writes nothing, and the server keeps serving")
    func oversized() async throws {
        try await GRPCEmulator.with { emulator in
            var vehicle = Requests.vehicle()
            var attribute = FleetEngineV1.VehicleAttribute()
            attribute.key = "blob"
            attribute.value = String(repeating: "a", count: 1_100_000)
            vehicle.attributes = [attribute]
            let error = try #require(
                await rpcError {
                    _ = try await emulator.vehicles.createVehicle(
                        Requests.createVehicle("big", vehicle),
                        metadata: bearer(F.server)
                    )
                }
            )
            #expect(error.code == .resourceExhausted, "\(error)")
            #expect(try await emulator.store.vehicle(provider: "demo-project", id: "big") == nil)
            let small = try await emulator.vehicles.createVehicle(
                Requests.createVehicle("small"),
                metadata: bearer(F.server)
            )
            #expect(small.name.hasSuffix("/small"))
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("unknown fields in a request message are dropped at every depth: never stored, never served back")
    func unknownFieldsDropped() async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            // Field 9999 of a VehicleLocation, 100,000 bytes long: no field of Google's protos.
            var padded = try Requests.move("v1", to: 37.4, -122.1).vehicle.lastLocation.serializedBytes() as [UInt8]
            padded +=
                ProtoWire.varint(9999 << 3 | 2) + ProtoWire.varint(100_000) + [UInt8](repeating: 0x61, count: 100_000)
            var update = Requests.move("v1", to: 37.4, -122.1)
            update.vehicle.lastLocation = try FleetEngineV1.VehicleLocation(serializedBytes: padded)
            try #require(!update.vehicle.lastLocation.unknownFields.data.isEmpty, "the test sends the unknown field")
            _ = try await emulator.vehicles.updateVehicle(update, metadata: bearer(F.driver("v1")))

            let stored = try #require(try await emulator.store.vehicle(provider: "demo-project", id: "v1"))
            #expect(stored.lastLocation.unknownFields.data.isEmpty)
            #expect(stored.lastLocation.location.latitude == 37.4)
            let vehicle = try await emulator.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: bearer(F.server))
            #expect(vehicle.lastLocation.unknownFields.data.isEmpty)
            let trip = try await emulator.trips.getTrip(Requests.getTrip("t1"), metadata: bearer(F.consumer("t1")))
            #expect(trip.lastLocation.hasLocation)
            #expect(try (trip.serializedBytes() as [UInt8]).count < 10_000)
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test(
        "a call is authenticated before its message is decoded: bytes that are no message are UNAUTHENTICATED without a token"
    )
    func authenticatedBeforeDecoding() async throws {
        try await GRPCEmulator.with { emulator in
            // A field number 0 with a truncated varint: no protobuf parser accepts it.
            let garbage: [UInt8] = [0x00, 0xFF, 0xFF, 0xFF]
            func call(_ metadata: Metadata) async -> RPCError.Code? {
                await GRPCAuthorizationRowsTests.code {
                    _ = try await emulator.client.unary(
                        request: ClientRequest(message: garbage, metadata: metadata),
                        descriptor: FleetEngineV1.VehicleService.Method.GetVehicle.descriptor,
                        serializer: RawBytesCoder(),
                        deserializer: RawBytesCoder(),
                        options: .defaults
                    ) { try $0.message }
                }
            }
            #expect(await call([:]) == .unauthenticated)
            #expect(await call(bearer("not-a-jwt")) == .unauthenticated)
            let authenticated = await call(bearer(F.server))
            #expect(authenticated != nil && authenticated != .unauthenticated, "\(String(describing: authenticated))")
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("each RPC is counted in one series whichever transport brought it, by transport and canonical code")
    func rpcMetrics() async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            _ = try await emulator.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: bearer(F.server))
            let denied = await rpcError {
                _ = try await emulator.vehicles.getVehicle(Requests.getVehicle("v2"), metadata: bearer(F.driver("v1")))
            }
            #expect(denied?.code == .permissionDenied)
            let (status, _) = try await emulator.rest.call(
                .get,
                "/v1/providers/demo-project/vehicles/v1",
                token: F.server
            )
            #expect(status == .ok)
            let text = emulator.metrics.text
            let get = #"fleet_engine_rpcs_total{method="maps.fleetengine.v1.VehicleService/GetVehicle",transport="#
            for line in [
                get + #""grpc",code="OK"} 1"#, get + #""grpc",code="PERMISSION_DENIED"} 1"#,
                get + #""rest",code="OK"} 1"#,
                #"fleet_engine_rpcs_total{method="maps.fleetengine.v1.VehicleService/CreateVehicle",transport="rest",code="OK"} 2"#,
                #"fleet_engine_rpc_duration_seconds_count{method="maps.fleetengine.v1.VehicleService/GetVehicle"} 3"#,
            ] {
                #expect(text.contains(line), "\(line)")
            }
        }
    }

    @Test("every message REST returns is the proto3 JSON of the message gRPC returns for the same call")
    func parity() async throws {
        // The tokens are minted before the clock starts: one minted later than a minute after it (a loaded machine
        // runs the whole suite at once) would expire more than an hour after the clock's now, which is refused.
        let server = bearer(F.server)
        let driver = bearer(F.driver("v1"))
        let clock = ManualClock()
        try await GRPCEmulator.with(clock: clock) { emulator in
            try await emulator.seed()
            _ = try await emulator.vehicles.updateVehicle(
                Requests.move("v1", to: 37.401, -122.101),
                metadata: driver
            )
            var attribute = FleetEngineV1.VehicleAttribute()
            attribute.key = "accessible"
            attribute.boolValue = true
            var attributes = FleetEngineV1.UpdateVehicleAttributesRequest()
            attributes.name = "\(GRPCEmulator.provider)/vehicles/v2"
            attributes.attributes = [attribute]
            _ = try await emulator.vehicles.updateVehicleAttributes(attributes, metadata: server)
            clock.advance(by: .seconds(30))

            func same<M: SwiftProtobuf.Message & Equatable>(
                _ grpc: M,
                _ path: String,
                method: HTTPRequest.Method = .get,
                body: String? = nil
            ) async throws {
                let (status, rest) = try await emulator.rest.call(method, path, token: F.server, body: body)
                #expect(status == .ok, "\(path): \(rest.jsonText)")
                #expect(try M(restJSON: rest) == grpc, "\(path)")
                // And the JSON is exactly the mapping of the gRPC message (field names, defaults omitted).
                let mapped = try StrictJSONParser().parseObject(Array(grpc.jsonUTF8Data()))
                #expect(rest == mapped, "\(path)")
            }
            let p = GRPCEmulator.provider
            try await same(
                try await emulator.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: server),
                "/v1/\(Self.v1)"
            )
            try await same(
                try await emulator.vehicles.getVehicle(Requests.getVehicle("v2"), metadata: server),
                "/v1/\(p)/vehicles/v2"
            )
            try await same(
                try await emulator.trips.getTrip(Requests.getTrip("t1"), metadata: server),
                "/v1/\(p)/trips/t1"
            )
            var list = FleetEngineV1.ListVehiclesRequest()
            list.parent = p
            list.vehicleTypeCategories = [.auto]
            list.pageSize = 1
            try await same(
                try await emulator.vehicles.listVehicles(list, metadata: server),
                "/v1/\(p)/vehicles?vehicleTypeCategories=AUTO&pageSize=1"
            )
            let search = Requests.search(tripID: "t2")
            try await same(
                try await emulator.vehicles.searchVehicles(search, metadata: server),
                "/v1/\(p)/vehicles:search",
                method: .post,
                body: try search.jsonString()
            )
            var trips = FleetEngineV1.SearchTripsRequest()
            trips.parent = p
            try await same(
                try await emulator.trips.searchTrips(trips, metadata: server),
                "/v1/\(p)/trips:search",
                method: .post,
                body: "{}"
            )
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test(
        "the role × method matrix over gRPC: one allowed and one denied call per cell",
        arguments: HTTPMatrixTests.cells
    )
    func matrix(_ cell: HTTPMatrixTests.Cell) async throws {
        let invoke = try #require(Self.invocations[cell.call.method], "no gRPC call for \(cell.call.method)")
        try await GRPCEmulator.with(accounts: HTTPMatrixTests.accounts) { emulator in
            let seed = try FleetEngineTokenMinter(signer: LocalKeySigner(key: HTTPMatrixTests.seedKey))
                .mintSynchronously(.server).jwt
            try await emulator.seed(token: seed)
            let before = try await HTTPMatrixTests.snapshot(emulator.store)
            func denied(_ claims: AuthorizationClaims) async throws -> String {
                let error = await rpcError {
                    try await invoke(emulator, bearer(HTTPMatrixTests.token(cell.role, claims)))
                }
                #expect(error?.code == .permissionDenied, "\(String(describing: error))")
                #expect(try await HTTPMatrixTests.snapshot(emulator.store) == before, "a denied call changed the store")
                return error?.message ?? ""
            }
            if cell.role.grants(cell.call.method.permission), cell.role.ignoresAuthorizationClaims {
                // An admin role ignores the claims: claims for another resource do not narrow it.
                try await invoke(emulator, bearer(HTTPMatrixTests.token(cell.role, cell.call.other)))
            } else if cell.role.grants(cell.call.method.permission) {
                _ = try await denied(cell.call.other)
                try await invoke(emulator, bearer(HTTPMatrixTests.token(cell.role, cell.call.covering)))
            } else {
                let message = try await denied(cell.call.covering)
                #expect(message.contains(cell.call.method.permission.name), "\(message)")
            }
        }
    }

    @available(FleetAuthGRPC, *)
    typealias Invocation = @Sendable (GRPCEmulator, Metadata) async throws -> Void

    /// The gRPC twin of each row of ``HTTPMatrixTests/calls``.
    @available(FleetAuthGRPC, *)
    static let invocations: [FleetEngineMethod: Invocation] = [
        .createVehicle: { _ = try await $0.vehicles.createVehicle(Requests.createVehicle("v3"), metadata: $1) },
        .getVehicle: { _ = try await $0.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: $1) },
        .updateVehicleLocation: {
            _ = try await $0.vehicles.updateVehicle(Requests.move("v1", to: 37.41, -122.11), metadata: $1)
        },
        .updateVehicle: {
            var vehicle = FleetEngineV1.Vehicle()
            vehicle.maximumCapacity = 6
            _ = try await $0.vehicles.updateVehicle(
                Requests.updateVehicle("v1", vehicle, mask: ["maximum_capacity"]),
                metadata: $1
            )
        },
        .updateVehicleAttributes: {
            var request = FleetEngineV1.UpdateVehicleAttributesRequest()
            request.name = v1
            var attribute = FleetEngineV1.VehicleAttribute()
            attribute.key = "color"
            attribute.value = "red"
            request.attributes = [attribute]
            _ = try await $0.vehicles.updateVehicleAttributes(request, metadata: $1)
        },
        .listVehicles: {
            var request = FleetEngineV1.ListVehiclesRequest()
            request.parent = GRPCEmulator.provider
            request.vehicleTypeCategories = [.auto]
            request.pageSize = 10
            _ = try await $0.vehicles.listVehicles(request, metadata: $1)
        },
        .deleteVehicle: {
            var request = FleetEngineV1.DeleteVehicleRequest()
            request.name = "\(GRPCEmulator.provider)/vehicles/v2"
            _ = try await $0.vehicles.deleteVehicle(request, metadata: $1)
        },
        .searchVehicles: { _ = try await $0.vehicles.searchVehicles(Requests.search(tripID: "t1"), metadata: $1) },
        .createTrip: { _ = try await $0.trips.createTrip(Requests.createTrip("t3"), metadata: $1) },
        .getTrip: { _ = try await $0.trips.getTrip(Requests.getTrip("t1"), metadata: $1) },
        .updateTrip: {
            var trip = FleetEngineV1.Trip()
            trip.dropoffPoint = Requests.terminal(37.6, -122.3)
            _ = try await $0.trips.updateTrip(Requests.updateTrip("t1", trip, mask: ["dropoff_point"]), metadata: $1)
        },
        .updateTripState: {
            var trip = FleetEngineV1.Trip()
            trip.tripStatus = .enrouteToPickup
            _ = try await $0.trips.updateTrip(Requests.updateTrip("t1", trip, mask: ["trip_status"]), metadata: $1)
        },
        .deleteTrip: {
            var request = FleetEngineV1.DeleteTripRequest()
            request.name = "\(GRPCEmulator.provider)/trips/t2"
            _ = try await $0.trips.deleteTrip(request, metadata: $1)
        },
        .searchTrips: {
            var request = FleetEngineV1.SearchTripsRequest()
            request.parent = GRPCEmulator.provider
            request.vehicleID = "v1"
            _ = try await $0.trips.searchTrips(request, metadata: $1)
        },
        .reportBillableTrip: {
            var request = FleetEngineV1.ReportBillableTripRequest()
            request.name = "\(GRPCEmulator.provider)/billableTrips/t1"
            request.countryCode = "US"
            _ = try await $0.trips.reportBillableTrip(request, metadata: $1)
        },
    ]
}

/// The authorization rows A1–A7 and A9 of the *Verification rules* article over gRPC, as ``AuthorizationRowsTests``
/// checks them over REST.
@Suite("Authorization rows over gRPC")
struct GRPCAuthorizationRowsTests {
    typealias F = EmulatorFixture

    @available(FleetAuthGRPC, *)
    static func code(_ body: () async throws -> Void) async -> RPCError.Code? {
        do {
            try await body()
            return nil
        } catch let error as RPCError {
            return error.code
        } catch {
            return .unknown
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("A1/A2: a driver token reaches only its vehicle and its trips; a consumer token only its trip")
    func a1a2() async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            let before = try await emulator.store.vehicle(provider: "demo-project", id: "v2")
            let v = emulator.vehicles
            let t = emulator.trips
            #expect(
                await Self.code {
                    _ = try await v.getVehicle(Requests.getVehicle("v2"), metadata: bearer(F.driver("v1")))
                } == .permissionDenied
            )
            #expect(
                await Self.code {
                    _ = try await v.updateVehicle(
                        Requests.move("v2", to: 37.41, -122.11),
                        metadata: bearer(F.driver("v1"))
                    )
                } == .permissionDenied
            )
            #expect(try await emulator.store.vehicle(provider: "demo-project", id: "v2") == before)
            #expect(
                await Self.code { _ = try await t.getTrip(Requests.getTrip("t1"), metadata: bearer(F.driver("v2"))) }
                    == .permissionDenied
            )
            #expect(
                await Self.code { _ = try await t.getTrip(Requests.getTrip("t1"), metadata: bearer(F.driver("v1"))) }
                    == nil
            )
            #expect(
                await Self.code { _ = try await t.getTrip(Requests.getTrip("t2"), metadata: bearer(F.consumer("t1"))) }
                    == .permissionDenied
            )
            #expect(
                await Self.code { _ = try await t.getTrip(Requests.getTrip("t1"), metadata: bearer(F.consumer("t1"))) }
                    == nil
            )
            #expect(
                await Self.code {
                    _ = try await v.updateVehicle(
                        Requests.move("v1", to: 37.41, -122.11),
                        metadata: bearer(F.consumer("t1"))
                    )
                } == .permissionDenied
            )
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("A3: a token of project A on providers/B is PERMISSION_DENIED, both ways")
    func a3() async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            let other = F.token(F.otherProjectKey, .server)
            let error = await rpcError {
                _ = try await emulator.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: bearer(other))
            }
            #expect(error?.code == .permissionDenied)
            #expect(error?.message.contains("project") == true)
            var request = FleetEngineV1.GetVehicleRequest()
            request.name = "providers/other-project/vehicles/v1"
            #expect(
                await Self.code { _ = try await emulator.vehicles.getVehicle(request, metadata: bearer(F.server)) }
                    == .permissionDenied
            )
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test(
        "A4/A5: malformed authorization claims are UNAUTHENTICATED; a missing one is PERMISSION_DENIED 'no scopes'",
        arguments: [
            (nil, "permissionDenied"),
            (#""v1""#, "unauthenticated"),
            (#"{"vehicleid":["v1"]}"#, "unauthenticated"),
            (#"{"VehicleId":"v1"}"#, "unauthenticated"),
            (#"{"vehicleid":"v1","role":"admin"}"#, "unauthenticated"),
            (#"{"vehicleid":""}"#, "unauthenticated"),
            (#"{"vehicleid":"v1"}"#, nil),
        ] as [(String?, String?)]
    )
    func a4(_ authorization: String?, _ expected: String?) async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            let token = AuthorizationRowsTests.forge(authorization: authorization)
            do {
                _ = try await emulator.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: bearer(token))
                #expect(expected == nil)
            } catch let error as RPCError {
                #expect("\(error.code)" == expected)
                if expected == "permissionDenied" { #expect(error.message == "JWT does not contain any scopes.") }
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("A5: \"*\" matches every vehicle, but only within the signing account's role")
    func a5() async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            let wildcard = bearer(AuthorizationRowsTests.forge(authorization: #"{"vehicleid":"*"}"#))
            #expect(
                await Self.code {
                    _ = try await emulator.vehicles.getVehicle(Requests.getVehicle("v2"), metadata: wildcard)
                } == nil
            )
            #expect(
                await Self.code {
                    _ = try await emulator.vehicles.createVehicle(Requests.createVehicle("v9"), metadata: wildcard)
                } == .permissionDenied
            )
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test(
        "A6: resource IDs are compared byte for byte with the claim, never normalized",
        arguments: ["v1/../v2", "v1/", "v1 ", " v1", "v1\u{0}", "V1", "v\u{200B}1", "\u{FF56}1", "v1:"]
    )
    func a6(_ id: String) async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            let before = try await emulator.store.vehicle(provider: "demo-project", id: "v1")
            let read = await Self.code {
                _ = try await emulator.vehicles.getVehicle(Requests.getVehicle(id), metadata: bearer(F.driver("v1")))
            }
            #expect([.invalidArgument, .permissionDenied, .notFound].contains(read), "\(String(describing: read))")
            let write = await Self.code {
                _ = try await emulator.vehicles.updateVehicle(
                    Requests.move(id, to: 37.41, -122.11),
                    metadata: bearer(F.driver("v1"))
                )
            }
            #expect([.invalidArgument, .permissionDenied, .notFound].contains(write), "\(String(describing: write))")
            #expect(try await emulator.store.vehicle(provider: "demo-project", id: "v1") == before)
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("A7: the role comes from the signing account; a consumer account's token claiming vehicles gains nothing")
    func a7() async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            let consumerAsDriver = AuthorizationRowsTests.forge(
                authorization: #"{"vehicleid":"v1"}"#,
                key: F.consumerKey
            )
            let error = await rpcError {
                _ = try await emulator.vehicles.updateVehicle(
                    Requests.move("v1", to: 37.41, -122.11),
                    metadata: bearer(consumerAsDriver)
                )
            }
            #expect(error?.code == .permissionDenied)
            #expect(error?.message.contains("vehicles.updateLocation") == true)
            let consumerAsServer = AuthorizationRowsTests.forge(
                authorization: #"{"vehicleid":"*","tripid":"*"}"#,
                key: F.consumerKey
            )
            #expect(
                await Self.code {
                    _ = try await emulator.vehicles.createVehicle(
                        Requests.createVehicle("v9"),
                        metadata: bearer(consumerAsServer)
                    )
                } == .permissionDenied
            )
            #expect(try await emulator.store.vehicle(provider: "demo-project", id: "v9") == nil)
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @Test("A9: bad signature, unknown kid, unknown issuer and expiry answer the same status and message")
    func a9() async throws {
        try await GRPCEmulator.with { emulator in
            try await emulator.seed()
            let good = F.driver("v1")
            var parts = good.split(separator: ".").map(String.init)
            parts[2] = String(parts[2].reversed())
            let stranger = try TestKeys.keyNow(projectID: "demo-project", name: "driver")
            let tokens = [
                parts.joined(separator: "."),
                AuthorizationRowsTests.forge(authorization: #"{"vehicleid":"v1"}"#, key: stranger),
                AuthorizationRowsTests.forge(
                    authorization: #"{"vehicleid":"v1"}"#,
                    key: try TestKeys.keyNow(projectID: "demo-project", name: "nobody")
                ),
                AuthorizationRowsTests.forge(
                    authorization: #"{"vehicleid":"v1"}"#,
                    iat: Int(Date().timeIntervalSince1970) - 7200
                ),
                "not-a-jwt",
            ]
            var answers: Set<String> = []
            for token in tokens {
                let error = await rpcError {
                    _ = try await emulator.vehicles.getVehicle(Requests.getVehicle("v1"), metadata: bearer(token))
                }
                answers.insert("\(String(describing: error?.code)) \(error?.message ?? "")")
                #expect(error?.message.contains(token) == false)
            }
            #expect(answers.count == 1, "\(answers)")
            #expect(answers.first?.contains("unauthenticated") == true)
        }
    }
}

extension String {
    /// `permissionDenied` → `PERMISSION_DENIED`: the REST spelling of a gRPC code's Swift name.
    var uppercasedSnake: String {
        var result = ""
        for character in self {
            if character.isUppercase { result += "_" }
            result += character.uppercased()
        }
        return result
    }
}

/// Sends and receives message bytes as they are, for messages no generated client would send.
struct RawBytesCoder: MessageSerializer, MessageDeserializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> [UInt8] {
        serializedMessageBytes.withUnsafeBytes { Array($0) }
    }
}
