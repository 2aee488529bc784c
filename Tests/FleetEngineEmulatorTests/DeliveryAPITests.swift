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

/// Accounts with each delivery role, and their tokens.
enum DeliveryFixture {
    static let project = "demo-project"
    static let superUserKey = try! TestKeys.keyNow(projectID: project, name: "delivery-super")
    static let trustedKey = try! TestKeys.keyNow(projectID: project, name: "delivery-trusted")
    static let untrustedKey = try! TestKeys.keyNow(projectID: project, name: "delivery-untrusted")
    static let consumerKey = try! TestKeys.keyNow(projectID: project, name: "delivery-consumer")
    static let readerKey = try! TestKeys.keyNow(projectID: project, name: "delivery-reader")

    static let accounts: [(TrustedServiceAccount, [RSAVerificationKey])] = [
        (superUserKey, FleetEngineRole.deliverySuperUser), (trustedKey, .deliveryTrustedDriver),
        (untrustedKey, .deliveryUntrustedDriver), (consumerKey, .deliveryConsumer),
        (readerKey, .deliveryFleetReader),
    ].map { key, role in
        (TrustedServiceAccount(email: key.clientEmail, project: project, roles: [role]), [key.verificationKey])
    }

    static func token(_ key: ServiceAccountKey, _ type: FleetEngineTokenType) -> String {
        try! FleetEngineTokenMinter(signer: LocalKeySigner(key: key)).mintSynchronously(type).jwt
    }

    static let server = token(superUserKey, .deliveryServer)
    static let reader = token(readerKey, .deliveryFleetReader)
    static func trusted(_ vehicle: String, task: String? = nil) -> String {
        token(trustedKey, try! .trustedDeliveryDriver(deliveryVehicleID: vehicle, taskID: task))
    }
    static func untrusted(_ vehicle: String) -> String {
        token(untrustedKey, try! .untrustedDeliveryDriver(deliveryVehicleID: vehicle))
    }
    static func consumer(tracking: String) -> String {
        token(consumerKey, try! .deliveryConsumer(trackingID: tracking))
    }

    /// An emulator over a store of `driver`, for REST calls.
    static func withEmulator(
        _ driver: FleetStoreDriver,
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let (store, _) = try await driver.open()
        let router = FleetEngineEmulator.makeRouter(authenticator: TokenAuthenticator(accounts: accounts), store: store)
        try await Application(router: router).test(.router) { client in try await body(client) }
    }

    static func task(_ type: String, tracking: String?, latitude: Double = 51.5, extra: String = "") -> String {
        let trackingMember = tracking.map { #""trackingId":"\#($0)","# } ?? ""
        return
            #"{"type":"\#(type)","state":"OPEN",\#(trackingMember)"plannedLocation":{"point":{"latitude":\#(latitude),"longitude":-0.12}},"taskDuration":"120s"\#(extra)}"#
    }

    /// Journey segments: one stop per group of task IDs, at latitudes 51.5, 51.51, …
    static func stops(_ groups: [[String]]) -> String {
        let segments = groups.enumerated().map { index, tasks in
            let infos = tasks.map { #"{"taskId":"\#($0)","taskDuration":"60s"}"# }.joined(separator: ",")
            return
                #"{"stop":{"plannedLocation":{"point":{"latitude":\#(51.5 + Double(index) / 100),"longitude":-0.12}},"tasks":[\#(infos)],"state":"NEW"}}"#
        }
        return #"{"remainingVehicleJourneySegments":[\#(segments.joined(separator: ","))]}"#
    }
}

@Suite("Deliveries API (REST)", .temporaryResources)
struct DeliveryAPITests {
    typealias F = DeliveryFixture
    static let base = "/v1/providers/demo-project"

    @Test(
        "a route: vehicle, tasks in a batch, stops assign them, tracking, stops removed close them, outcomes once",
        arguments: FleetStoreDriver.all
    )
    func route(_ driver: FleetStoreDriver) async throws {
        try await F.withEmulator(driver) { client in
            let base = Self.base
            let (created, vehicle) = try await client.call(
                .post,
                "\(base)/deliveryVehicles?deliveryVehicleId=van-1",
                token: F.trusted("van-1"),
                body: #"{"type":"AUTO","lastLocation":{"location":{"latitude":51.49,"longitude":-0.12}}}"#
            )
            #expect(created == .ok)
            #expect(vehicle["name"] == "providers/demo-project/deliveryVehicles/van-1")
            #expect(vehicle["lastLocation"]?.objectValue?["serverTime"] != nil)

            let batch =
                #"{"requests":[{"taskId":"t-pickup","task":\#(F.task("PICKUP", tracking: "parcel-9"))},{"taskId":"t-drop","task":\#(F.task("DELIVERY", tracking: "parcel-9", latitude: 51.51))},{"taskId":"t-break","task":\#(F.task("UNAVAILABLE", tracking: nil))}]}"#
            let (batched, tasks) = try await client.call(
                .post,
                "\(base)/tasks:batchCreate",
                token: F.server,
                body: batch
            )
            #expect(batched == .ok)
            #expect(tasks["tasks"]?.arrayValue?.count == 3)
            #expect(tasks["tasks"]?.arrayValue?.first?.objectValue?["state"] == "OPEN")

            // The untrusted driver may report its location, not its stops.
            let (denied, _) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remainingVehicleJourneySegments",
                token: F.untrusted("van-1"),
                body: F.stops([["t-pickup"], ["t-drop"]])
            )
            #expect(denied == .forbidden)
            let (untouched, _) = try await client.call(.get, "\(base)/tasks/t-pickup", token: F.server)
            #expect(untouched == .ok)
            let (_, unassigned) = try await client.call(.get, "\(base)/tasks/t-pickup", token: F.server)
            #expect(unassigned["deliveryVehicleId"] == nil)

            let (assigned, route) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remaining_vehicle_journey_segments",
                token: F.trusted("van-1"),
                body: F.stops([["t-pickup"], ["t-drop"]])
            )
            #expect(assigned == .ok)
            #expect(route["remainingVehicleJourneySegments"]?.arrayValue?.count == 2)
            let (_, drop) = try await client.call(.get, "\(base)/tasks/t-drop", token: F.server)
            #expect(drop["deliveryVehicleId"] == "van-1")
            #expect(
                drop["journeySharingInfo"]?.objectValue?["remainingVehicleJourneySegments"]?.arrayValue?.count == 2
            )

            // The consumer of parcel-9 sees its shipment: the pickup (first open, assigned), 1 stop away.
            let (tracked, info) = try await client.call(
                .get,
                "\(base)/taskTrackingInfo/parcel-9",
                token: F.consumer(tracking: "parcel-9")
            )
            #expect(tracked == .ok)
            #expect(info["trackingId"] == "parcel-9")
            #expect(info["state"] == "OPEN")
            #expect(info["remainingStopCount"] == 1)
            #expect(info["vehicleLocation"]?.objectValue?["location"] == ["latitude": 51.49, "longitude": -0.12])
            let meters = try #require(info["remainingDrivingDistanceMeters"]?.integerValue)
            #expect((1_100...1_125).contains(meters), "0.01° of latitude is about 1,112 m")
            #expect(info["estimatedArrivalTime"]?.stringValue != nil)
            let (other, _) = try await client.call(
                .get,
                "\(base)/taskTrackingInfo/parcel-9",
                token: F.consumer(tracking: "parcel-8")
            )
            #expect(other == .forbidden)

            // An assigned task is not closed by UpdateTask, and a vehicle with open tasks is not deleted.
            let (refused, refusal) = try await client.call(
                .patch,
                "\(base)/tasks/t-pickup?updateMask=state",
                token: F.server,
                body: #"{"state":"CLOSED"}"#
            )
            #expect(refused == .badRequest)
            #expect(refusal["error"]?.objectValue?["status"] == "FAILED_PRECONDITION")
            let (kept, _) = try await client.call(.delete, "\(base)/deliveryVehicles/van-1", token: F.server)
            #expect(kept == .badRequest)

            // The pickup's stop removed: the pickup is CLOSED; its outcome is set once.
            let (removed, _) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remainingVehicleJourneySegments",
                token: F.trusted("van-1"),
                body: F.stops([["t-drop"]])
            )
            #expect(removed == .ok)
            let (_, pickup) = try await client.call(.get, "\(base)/tasks/t-pickup", token: F.server)
            #expect(pickup["state"] == "CLOSED")
            let (outcome, done) = try await client.call(
                .patch,
                "\(base)/tasks/t-pickup?updateMask=taskOutcome",
                token: F.trusted("van-1"),
                body: #"{"taskOutcome":"SUCCEEDED"}"#
            )
            #expect(outcome == .ok)
            #expect(done["taskOutcome"] == "SUCCEEDED")
            #expect(done["taskOutcomeTime"]?.stringValue != nil)
            // No outcome location given: the van's last location, marked as such.
            #expect(done["taskOutcomeLocation"]?.objectValue?["point"] == ["latitude": 51.49, "longitude": -0.12])
            #expect(done["taskOutcomeLocationSource"] == "LAST_VEHICLE_LOCATION")
            let (again, _) = try await client.call(
                .patch,
                "\(base)/tasks/t-pickup?updateMask=taskOutcome",
                token: F.server,
                body: #"{"taskOutcome":"FAILED"}"#
            )
            #expect(again == .badRequest)
            let (reopen, _) = try await client.call(
                .patch,
                "\(base)/tasks/t-pickup?updateMask=state",
                token: F.server,
                body: #"{"state":"OPEN"}"#
            )
            #expect(reopen == .badRequest)
            // A closed task cannot be put on a stop again.
            let (reassigned, _) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remainingVehicleJourneySegments",
                token: F.trusted("van-1"),
                body: F.stops([["t-pickup"], ["t-drop"]])
            )
            #expect(reassigned == .badRequest)

            // Tracking now shows the delivery, still open.
            let (_, later) = try await client.call(
                .get,
                "\(base)/taskTrackingInfo/parcel-9",
                token: F.consumer(tracking: "parcel-9")
            )
            #expect(later["remainingStopCount"] == 1)
            #expect(later["plannedLocation"]?.objectValue?["point"] == ["latitude": 51.51, "longitude": -0.12])

            // Every stop removed: the delivery closes, then the vehicle can go.
            let (cleared, _) = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van-1?updateMask=remainingVehicleJourneySegments",
                token: F.server,
                body: #"{}"#
            )
            #expect(cleared == .ok)
            let (deleted, _) = try await client.call(.delete, "\(base)/deliveryVehicles/van-1", token: F.server)
            #expect(deleted == .ok)
            let (deletedTask, _) = try await client.call(.delete, "\(base)/tasks/t-drop", token: F.server)
            #expect(deletedTask == .ok)
        }
    }

    @Test(
        "CreateTask's rules: type, OPEN, tracking ID by type, planned location, duration, no output fields",
        arguments: [
            (F.task("PICKUP", tracking: nil), "trackingId is required"),
            (F.task("UNAVAILABLE", tracking: "x"), "must not be set"),
            (F.task("SCHEDULED_STOP", tracking: "x"), "must not be set"),
            (#"{"type":"DELIVERY","state":"OPEN","trackingId":"p","taskDuration":"1s"}"#, "plannedLocation.point"),
            (F.task("DELIVERY", tracking: "p").replacingOccurrences(of: #""OPEN""#, with: #""CLOSED""#), "OPEN"),
            (
                F.task("DELIVERY", tracking: "p").replacingOccurrences(of: #","taskDuration":"120s""#, with: ""),
                "taskDuration"
            ),
            (F.task("DELIVERY", tracking: "p", extra: #","deliveryVehicleId":"van-1""#), "deliveryVehicleId"),
            (F.task("DELIVERY", tracking: "p", extra: #","taskOutcome":"SUCCEEDED""#), "taskOutcome"),
            (#"{"state":"OPEN","taskDuration":"1s"}"#, "type is required"),
        ]
    )
    func createRules(_ body: String, _ mentions: String) async throws {
        try await F.withEmulator(.sqliteInMemory) { client in
            let (status, error) = try await client.call(
                .post,
                "\(Self.base)/tasks?taskId=t1",
                token: F.server,
                body: body
            )
            #expect(status == .badRequest)
            let message = error["error"]?.objectValue?["message"]?.stringValue ?? ""
            #expect(message.contains(mentions), "\(message)")
            let (missing, _) = try await client.call(.get, "\(Self.base)/tasks/t1", token: F.server)
            #expect(missing == .notFound)
        }
    }

    @Test("BatchCreateTasks is all or nothing: a taken ID, a foreign parent or a bad task creates none")
    func batchAllOrNothing() async throws {
        try await F.withEmulator(.sqliteInMemory) { client in
            let base = Self.base
            let (first, _) = try await client.call(
                .post,
                "\(base)/tasks?taskId=taken",
                token: F.server,
                body: F.task("DELIVERY", tracking: "p1")
            )
            #expect(first == .ok)
            for (body, status) in [
                (
                    #"{"requests":[{"taskId":"new-1","task":\#(F.task("DELIVERY", tracking: "p2"))},{"taskId":"taken","task":\#(F.task("DELIVERY", tracking: "p3"))}]}"#,
                    HTTPResponse.Status.conflict
                ),
                (
                    #"{"requests":[{"taskId":"new-1","task":\#(F.task("DELIVERY", tracking: "p2"))},{"parent":"providers/other","taskId":"new-2","task":\#(F.task("DELIVERY", tracking: "p3"))}]}"#,
                    .badRequest
                ),
                (
                    #"{"requests":[{"taskId":"new-1","task":\#(F.task("DELIVERY", tracking: "p2"))},{"taskId":"new-2","task":\#(F.task("PICKUP", tracking: nil))}]}"#,
                    .badRequest
                ),
                (#"{"requests":[]}"#, .badRequest),
            ] {
                let (status_, _) = try await client.call(
                    .post,
                    "\(base)/tasks:batchCreate",
                    token: F.server,
                    body: body
                )
                #expect(status_ == status, "\(body.prefix(80))")
                let (missing, _) = try await client.call(.get, "\(base)/tasks/new-1", token: F.server)
                #expect(missing == .notFound)
            }
            let many = (0..<501).map { #"{"taskId":"b\#($0)","task":\#(F.task("DELIVERY", tracking: "p"))}"# }
            let (tooMany, _) = try await client.call(
                .post,
                "\(base)/tasks:batchCreate",
                token: F.server,
                body: #"{"requests":[\#(many.joined(separator: ","))]}"#
            )
            #expect(tooMany == .badRequest)
            // A driver's token lists the batch's task IDs in `taskids`, or it is refused.
            let claims = AuthorizationClaims(taskIDs: ["b1"])
            let listed = F.token(F.trustedKey, try .custom(claims))
            let (mismatch, _) = try await client.call(
                .post,
                "\(base)/tasks:batchCreate",
                token: listed,
                body:
                    #"{"requests":[{"taskId":"b1","task":\#(F.task("DELIVERY", tracking: "p"))},{"taskId":"b2","task":\#(F.task("DELIVERY", tracking: "p"))}]}"#
            )
            #expect(mismatch == .forbidden)
            let (matched, _) = try await client.call(
                .post,
                "\(base)/tasks:batchCreate",
                token: listed,
                body: #"{"requests":[{"taskId":"b1","task":\#(F.task("DELIVERY", tracking: "p"))}]}"#
            )
            #expect(matched == .ok)
        }
    }

    @Test("ListTasks filters (state, type, outcome, attributes, AND/OR/NOT, coordinates), pages and counts")
    func listTasks() async throws {
        try await F.withEmulator(.sqliteInMemory) { client in
            let base = Self.base
            for index in 0..<12 {
                let type = index % 3 == 0 ? "PICKUP" : "DELIVERY"
                let zone = index % 2 == 0 ? "north" : "south"
                let (status, _) = try await client.call(
                    .post,
                    "\(base)/tasks?taskId=t\(String(format: "%02d", index))",
                    token: F.server,
                    body: F.task(
                        type,
                        tracking: "p\(index)",
                        latitude: 51 + Double(index) / 10,
                        extra: #","attributes":[{"key":"zone","stringValue":"\#(zone)"}]"#
                    )
                )
                #expect(status == .ok)
            }
            func list(_ filter: String, pageSize: Int = 100, token pageToken: String = "") async throws -> (
                HTTPResponse.Status, JSONObject
            ) {
                let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                return try await client.call(
                    .get,
                    "\(base)/tasks?filter=\(encoded)&pageSize=\(pageSize)&pageToken=\(pageToken)",
                    token: F.reader
                )
            }
            func ids(_ page: JSONObject) -> [String] {
                (page["tasks"]?.arrayValue ?? []).compactMap {
                    $0.objectValue?["name"]?.stringValue?.split(separator: "/").last.map(String.init)
                }
            }
            #expect(ids(try await list("type = PICKUP").1) == ["t00", "t03", "t06", "t09"])
            #expect(ids(try await list(#"type = PICKUP AND attributes.zone = "north""#).1) == ["t00", "t06"])
            #expect(ids(try await list("attributes.zone = south AND NOT type = DELIVERY").1) == ["t03", "t09"])
            #expect(ids(try await list("type = PICKUP OR attributes.zone = north state = OPEN").1).count == 8)
            #expect(
                ids(
                    try await list(
                        "planned_location.point.latitude >= 51.95 AND planned_location.point.latitude < 52.15"
                    ).1
                )
                    == ["t10", "t11"]
            )
            #expect(ids(try await list(#"tracking_id = "p4""#).1) == ["t04"])
            #expect(ids(try await list("state = CLOSED").1).isEmpty)
            let (_, first) = try await list("type = DELIVERY", pageSize: 5)
            #expect(ids(first) == ["t01", "t02", "t04", "t05", "t07"])
            #expect(first["totalSize"] == "8")
            let next = try #require(first["nextPageToken"]?.stringValue)
            let (_, second) = try await list("type = DELIVERY", pageSize: 5, token: next)
            #expect(ids(second) == ["t08", "t10", "t11"])
            #expect(second["nextPageToken"] == nil)

            for (bad, mentions) in [
                ("type = PICKUP AND (state = OPEN", "column 19"), ("colour = red", "no field \"colour\""),
                ("type = TRUCK", "TRUCK"), ("state > OPEN", "= or !="), ("type =", "needs a value"),
            ] {
                let (status, error) = try await list(bad)
                #expect(status == .badRequest, "\(bad)")
                let message = error["error"]?.objectValue?["message"]?.stringValue ?? ""
                #expect(message.contains(mentions), "\(bad): \(message)")
            }
            // A consumer may not list tasks.
            let (forbidden, _) = try await client.call(.get, "\(base)/tasks", token: F.consumer(tracking: "p1"))
            #expect(forbidden == .forbidden)
        }
    }

    @Test("ListDeliveryVehicles: attribute filter, viewport, paging; a driver sees only its vehicle")
    func listVehicles() async throws {
        try await F.withEmulator(.sqliteInMemory) { client in
            let base = Self.base
            for (index, latitude) in [51.0, 52.0, 53.0].enumerated() {
                let (status, _) = try await client.call(
                    .post,
                    "\(base)/deliveryVehicles?deliveryVehicleId=v\(index)",
                    token: F.server,
                    body:
                        #"{"lastLocation":{"location":{"latitude":\#(latitude),"longitude":0}},"attributes":[{"key":"depot","value":"\#(index == 1 ? "east" : "west")"}]}"#
                )
                #expect(status == .ok)
            }
            let filter = #"attributes.depot = "west""#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let (_, west) = try await client.call(.get, "\(base)/deliveryVehicles?filter=\(filter)", token: F.reader)
            #expect(west["deliveryVehicles"]?.arrayValue?.count == 2)
            #expect(west["totalSize"] == "2")
            let viewport =
                "viewport.low.latitude=51.5&viewport.low.longitude=-1&viewport.high.latitude=53.5&viewport.high.longitude=1"
            let (_, inside) = try await client.call(.get, "\(base)/deliveryVehicles?\(viewport)", token: F.reader)
            #expect(inside["deliveryVehicles"]?.arrayValue?.count == 2)
            let (forbidden, _) = try await client.call(.get, "\(base)/deliveryVehicles", token: F.trusted("v0"))
            #expect(forbidden == .forbidden)
            let (own, _) = try await client.call(.get, "\(base)/deliveryVehicles/v0", token: F.untrusted("v0"))
            #expect(own == .ok)
            let (others, _) = try await client.call(.get, "\(base)/deliveryVehicles/v1", token: F.untrusted("v0"))
            #expect(others == .forbidden)
            let (create, _) = try await client.call(
                .post,
                "\(base)/deliveryVehicles?deliveryVehicleId=v9",
                token: F.untrusted("v9"),
                body: "{}"
            )
            #expect(create == .forbidden)
            let (extra, error) = try await client.call(
                .post,
                "\(base)/deliveryVehicles?deliveryVehicleId=v9",
                token: F.server,
                body: #"{"navigationStatus":"NO_GUIDANCE"}"#
            )
            #expect(extra == .badRequest)
            #expect(error["error"]?.objectValue?["message"]?.stringValue?.contains("navigationStatus") == true)
        }
    }

    @Test("a task view config hides what it says: never, and thresholds on stops remaining")
    func visibility() async throws {
        try await F.withEmulator(.sqliteInMemory) { client in
            let base = Self.base
            _ = try await client.call(
                .post,
                "\(base)/deliveryVehicles?deliveryVehicleId=van",
                token: F.server,
                body: #"{"lastLocation":{"location":{"latitude":51.49,"longitude":-0.12}}}"#
            )
            let config =
                #","taskTrackingViewConfig":{"vehicleLocationVisibility":{"never":true},"remainingStopCountVisibility":{"remainingStopCountThreshold":1}}"#
            for (id, tracking) in [("a", "pa"), ("b", "pb")] {
                let (status, _) = try await client.call(
                    .post,
                    "\(base)/tasks?taskId=\(id)",
                    token: F.server,
                    body: F.task("DELIVERY", tracking: tracking, extra: config)
                )
                #expect(status == .ok)
            }
            _ = try await client.call(
                .patch,
                "\(base)/deliveryVehicles/van?updateMask=remainingVehicleJourneySegments",
                token: F.server,
                body: F.stops([["a"], ["b"]])
            )
            let (_, near) = try await client.call(
                .get,
                "\(base)/taskTrackingInfo/pa",
                token: F.consumer(tracking: "pa")
            )
            #expect(near["vehicleLocation"] == nil)
            #expect(near["remainingStopCount"] == 1)
            #expect(near["estimatedArrivalTime"] != nil)
            let (_, far) = try await client.call(.get, "\(base)/taskTrackingInfo/pb", token: F.consumer(tracking: "pb"))
            #expect(far["remainingStopCount"] == nil, "2 stops remain, over the threshold of 1")
            #expect(far["routePolylinePoints"]?.arrayValue?.count == 3)
        }
    }
}
