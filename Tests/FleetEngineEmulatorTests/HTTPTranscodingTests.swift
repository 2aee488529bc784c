import FleetAuthCore
import FleetAuthTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRPCCore
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FleetEngineEmulator

/// REST as Google's HttpRule mapping derives it from the protos' `google.api.http` annotations: the templates, the
/// routes, and how a request's path, body and query become the RPC's message.
@Suite("REST transcoding from the HTTP rules")
struct HTTPTranscodingTests {
    typealias F = EmulatorFixture
    typealias D = DeliveryFixture

    @Test("path templates follow HttpRule's grammar: variables, nested fields, *, **, verbs")
    func templates() throws {
        let attributes = try PathTemplate("/v1/{name=providers/*/vehicles/*}:updateAttributes")
        #expect(
            attributes.segments == [.literal("v1"), .literal("providers"), .wildcard, .literal("vehicles"), .wildcard]
        )
        #expect(attributes.variables == [.init(fieldPath: ["name"], segments: 1..<5)])
        #expect(attributes.verb == "updateAttributes")
        #expect(attributes.routerPath == "v1/providers/{provider}/vehicles/{vehicle}:updateAttributes")

        let nested = try PathTemplate("/v1/{delivery_vehicle.name=providers/*/deliveryVehicles/*}")
        #expect(nested.variables == [.init(fieldPath: ["delivery_vehicle", "name"], segments: 1..<5)])
        #expect(nested.routerPath == "v1/providers/{provider}/deliveryVehicles/{deliveryVehicle}")

        let search = try PathTemplate("/v1/{parent=providers/*}/vehicles:search")
        #expect(search.routerPath == "v1/providers/{provider}/vehicles:search" && search.verb == "search")

        // `{field}` is `{field=*}`, named after the field when no collection precedes it; `**` takes the rest.
        let bare = try PathTemplate("/v1/{shelf}/{book.name=books/**}")
        #expect(bare.segments == [.literal("v1"), .wildcard, .literal("books"), .recursiveWildcard])
        #expect(bare.variables.map(\.fieldPath) == [["shelf"], ["book", "name"]])
        #expect(bare.routerPath == "v1/{shelf}/books/**")
        let values = try bare.values(parameter: { $0 == "shelf" ? "s%C3%A9" : nil }, rest: { ["a", "b%20c"] })
        #expect(values.map(\.value) == ["sé", "books/a/b c"])

        for malformed in [
            "v1/vehicles", "/v1/**/x", "/v1/{a}/{a}", "/v1/a*b", "/v1/{name=providers/*", "/v1//x", "/v1/x:",
            "/v1/{na-me}", "/v1/{name=files/**}:get",
        ] {
            #expect(throws: PathTemplate.Malformed.self, "\(malformed)") { try PathTemplate(malformed) }
        }
    }

    @Test("a wildcard's segment is decoded once and must be an ID: a decoded / is refused")
    func wildcardValues() throws {
        let template = try PathTemplate("/v1/{name=providers/*/vehicles/*}")
        let value = try template.values(parameter: { $0 == "provider" ? "p" : "v%C3%A9" }, rest: { [] })
        #expect(value.map(\.value) == ["providers/p/vehicles/vé"])
        #expect(throws: GoogleAPIError.self) {
            try template.values(parameter: { $0 == "provider" ? "p" : "a%2Fb" }, rest: { [] })
        }
        #expect(throws: GoogleAPIError.self) {
            try template.values(parameter: { $0 == "provider" ? "p" : "%zz" }, rest: { [] })
        }
    }

    /// The full names of the methods a service implementation hands to its visitor.
    struct MethodNames: UnaryMethodVisitor {
        typealias Caller = Principal
        var all: [String] = []

        mutating func visit<Method: UnaryMethod>(
            _ method: Method.Type,
            _ handler: @escaping @Sendable (Method.Input, Principal) async throws -> Method.Output
        ) { all.append(Method.rpc.fullName) }
    }

    @Test("every RPC of both APIs is implemented once, and every one has its HTTP rule")
    @available(FleetAuthGRPC, *)
    func everyRPC() throws {
        let store = try SQLiteFleetStore(inMemory: ())
        let rpcs = FleetEngineRPCs(
            vehicles: OnDemandService(store: store),
            deliveries: DeliveryService(store: store)
        )
        var names = MethodNames()
        rpcs.visitUnaryMethods(&names)
        let served = names.all
        #expect(Set(served).count == served.count)
        #expect(Set(served) == Set(ProtoContract.methods.keys))
        #expect(Set(HTTPRules.all.keys) == Set(served))
        #expect(served.count == 25)
        // The rules give the routes: both APIs' 25 bindings, each on its own method and path.
        let routes = Set(HTTPRules.all.values.flatMap { $0 }.map { "\($0.method) /\($0.template.routerPath)" })
        #expect(routes.count == 25)
        #expect(routes.contains("PATCH /v1/providers/{provider}/tasks/{task}"))
        #expect(routes.contains("POST /v1/providers/{provider}/billableTrips/{billableTrip}:report"))
    }

    @Test(
        "an empty viewport is INVALID_ARGUMENT, as Google's Viewport says, in ListVehicles and ListDeliveryVehicles",
        arguments: [
            ("low.latitude=38&low.longitude=-123&high.latitude=37&high.longitude=-122", "low.latitude is above"),
            ("low.latitude=37&low.longitude=180&high.latitude=38&high.longitude=-180", "spans no longitude"),
            ("low.latitude=37&low.longitude=-123", "needs both low and high"),
        ]
    )
    func emptyViewport(_ corners: String, _ reason: String) async throws {
        let query = corners.split(separator: "&").map { "viewport.\($0)" }.joined(separator: "&")
        let server = EmulatorServer(
            accounts: F.accounts + DeliveryFixture.accounts,
            store: try SQLiteFleetStore(inMemory: ())
        )
        try await Application(router: server.router).test(.router) { client in
            for (path, token) in [
                (ProtoContractTests.vehicles + "?vehicleTypeCategories=AUTO&", F.server),
                ("/v1/providers/demo-project/deliveryVehicles?", DeliveryFixture.server),
            ] {
                let (status, error) = try await client.call(.get, path + query, token: token)
                #expect(status == .badRequest, "\(path)")
                #expect(
                    error["error"]?.objectValue?["message"]?.stringValue?.contains(reason) == true,
                    "\(error.jsonText)"
                )
            }
            // Across the 180th meridian, and from -180 to 180: every longitude, not empty.
            for corners in ["low.longitude=170&high.longitude=-170", "low.longitude=-180&high.longitude=180"] {
                let query =
                    "vehicleTypeCategories=AUTO&viewport.low.latitude=37&viewport.high.latitude=38&viewport."
                    + corners.replacingOccurrences(of: "&", with: "&viewport.")
                let (status, body) = try await client.call(
                    .get,
                    "\(ProtoContractTests.vehicles)?\(query)",
                    token: F.server
                )
                #expect(status == .ok, "\(body.jsonText)")
            }
        }
    }

    @Test("query fields come from the request message: either spelling, nested, repeated, enums by number")
    func queryBinding() async throws {
        try await ProtoContractTests.withEmulator { client in
            for id in ["a", "b"] {
                let (created, body) = try await client.call(
                    .post,
                    "\(ProtoContractTests.vehicles)?vehicle_id=\(id)",
                    token: F.server,
                    body: ProtoContractTests.vehicle()
                )
                #expect(created == .ok, "\(body.jsonText)")
            }
            // vehicle_type_categories by number (AUTO is 1), trip_types twice (SHARED, then EXCLUSIVE by number), a header field, a viewport corner.
            let (listed, list) = try await client.call(
                .get,
                "\(ProtoContractTests.vehicles)?vehicle_type_categories=1&tripTypes=SHARED&tripTypes=2"
                    + "&page_size=1&header.languageCode=en-GB&header.region_code=GB&viewport.low.latitude=37&viewport.low.longitude=-123"
                    + "&viewport.high.latitude=38&viewport.high.longitude=-122",
                token: F.server
            )
            #expect(listed == .ok, "\(list.jsonText)")
            #expect(ProtoContractTests.names(list, "vehicles").count == 1)
            #expect(list["totalSize"]?.stringValue == "2")
            // A field the path binds, a field that does not exist, and any field of a body-"*" method are refused.
            for uri in [
                "\(ProtoContractTests.vehicles)?vehicleTypeCategories=AUTO&parent=providers/other",
                "\(ProtoContractTests.vehicles)?vehicleTypeCategories=AUTO&colour=red",
            ] {
                let (status, error) = try await client.call(.get, uri, token: F.server)
                #expect(status == .badRequest, "\(uri)")
                #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("Cannot bind query") == true)
            }
            let (search, refusal) = try await client.call(
                .post,
                "\(ProtoContractTests.vehicles):search?pickupRadiusMeters=400",
                token: F.server,
                body: "{}"
            )
            #expect(search == .badRequest)
            #expect(refusal["error"]?.objectValue?["message"]?.stringValue?.contains("pickupRadiusMeters") == true)
        }
    }

    @Test(
        "a query's enum value must be one its enum declares, and a number must be finite: 400, never a crash",
        arguments: [
            // Past 32 bits: SwiftProtobuf kept these as unrecognized values it could not serialize (the process
            // trapped, on any route, with any valid token, since every request has `header.platform`).
            ("/taskTrackingInfo/TRK1?header.platform=4294967297", "header.platform"),
            ("/vehicles?vehicleTypeCategories=AUTO&tripTypes=2147483648", "tripTypes"),
            ("/vehicles?vehicleTypeCategories=AUTO&tripTypes=9223372036854775808", "tripTypes"),
            // Within 32 bits, but not declared: as a body's unknown enum number is.
            ("/vehicles?vehicleTypeCategories=AUTO&tripTypes=7", "tripTypes"),
            ("/vehicles?vehicleTypeCategories=AUTO&header.platform=-1", "header.platform"),
            ("/vehicles?vehicleTypeCategories=MOTORCYCLE", "vehicleTypeCategories"),
            // Infinite: the answer names the parameter, not the JSON text the binding wrote.
            ("/vehicles?vehicleTypeCategories=AUTO&minimumCapacity=1e400", "minimumCapacity"),
        ]
    )
    func queryEnumsAndNumbers(_ query: String, _ parameter: String) async throws {
        let server = EmulatorServer(
            accounts: F.accounts + D.accounts,
            store: try SQLiteFleetStore(inMemory: ())
        )
        try await Application(router: server.router).test(.router) { client in
            let token = query.hasPrefix("/taskTrackingInfo") ? D.consumer(tracking: "TRK1") : F.server
            let (status, error) = try await client.call(.get, "/v1/providers/demo-project" + query, token: token)
            #expect(status == .badRequest, "\(error.jsonText)")
            let message = error["error"]?.objectValue?["message"]?.stringValue ?? ""
            #expect(message.contains("'\(parameter)'"), "\(message)")
            #expect(!message.contains("byte"), "\(message)")
            // The server goes on answering.
            let (listed, _) = try await client.call(.get, ProtoContractTests.vehicles + "?" + F.autos, token: F.server)
            #expect(listed == .ok)
        }
    }

    @Test("a refused body names its refused value in a few trials, however long the array around it")
    func refusalLocatedByHalving() throws {
        let count = 500_000
        let items = [JSONValue](repeating: .integer(1), count: count - 1) + [.string("BAD")]
        var budget = 1_000
        let path = ProtoJSON.locate(
            .object(["tripTypes": .array(items)]),
            in: FleetEngineV1.SearchVehiclesRequest.self,
            path: "request",
            budget: &budget
        ) { $0 }
        #expect(path == "request.tripTypes[\(count - 1)]")
        // One trial for the member, 19 halvings of 500,000, one for the element: not one trial per element.
        #expect(1_000 - budget <= 24, "\(1_000 - budget) trials")

        // The whole refusal, as the REST body path answers it; and the budget bounds a search that would go on.
        let body =
            Array(#"{"tripTypes":["#.utf8) + Array(repeating: Array("1,".utf8), count: 200_000).joined()
            + Array(#""BAD"]}"#.utf8)
        #expect {
            try ProtoJSON.decode(body, as: FleetEngineV1.SearchVehiclesRequest.self, field: "request")
        } throws: { error in
            (error as? GoogleAPIError)?.message.contains("'request.tripTypes[200000]'") == true
        }
        var small = 3
        _ = ProtoJSON.locate(
            .object(["tripTypes": .array(items)]),
            in: FleetEngineV1.SearchVehiclesRequest.self,
            path: "request",
            budget: &small
        ) { $0 }
        #expect(small <= 0)
    }

    @Test("$alt=json;enum-encoding=int answers enums by number, as Google's REST clients ask")
    func enumsByNumber() async throws {
        try await ProtoContractTests.withEmulator { client in
            _ = try await client.call(
                .post,
                "\(ProtoContractTests.vehicles)?vehicleId=v",
                token: F.server,
                body: ProtoContractTests.vehicle()
            )
            let (_, named) = try await client.call(.get, "\(ProtoContractTests.vehicles)/v", token: F.server)
            #expect(named["vehicleState"] == "ONLINE")
            let (_, numbered) = try await client.call(
                .get,
                "\(ProtoContractTests.vehicles)/v?%24alt=json%3Benum-encoding%3Dint",
                token: F.server
            )
            #expect(numbered["vehicleState"] == 2)
            #expect(numbered["supportedTripTypes"] == [2, 1])
        }
    }

    @Test("a path variable inside the body's field wins over the body's own value")
    func pathWinsOverBody() async throws {
        try await D.withEmulator(.sqliteInMemory) { client in
            let base = "/v1/providers/demo-project/deliveryVehicles"
            for id in ["dv1", "dv2"] {
                let (created, body) = try await client.call(
                    .post,
                    "\(base)?deliveryVehicleId=\(id)",
                    token: D.server,
                    body: "{}"
                )
                #expect(created == .ok, "\(body.jsonText)")
            }
            let (updated, vehicle) = try await client.call(
                .patch,
                "\(base)/dv1?updateMask=lastLocation",
                token: D.server,
                body:
                    #"{"name":"providers/demo-project/deliveryVehicles/dv2","lastLocation":{"location":{"latitude":51.5,"longitude":-0.1}}}"#
            )
            #expect(updated == .ok, "\(vehicle.jsonText)")
            #expect(vehicle["name"] == "providers/demo-project/deliveryVehicles/dv1")
            let (_, other) = try await client.call(.get, "\(base)/dv2", token: D.server)
            #expect(other["lastLocation"] == nil)
        }
    }
}
