import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetAuthTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FleetEngineEmulator

@Suite("Request log", .temporaryResources)
struct RequestLogTests {
    typealias F = EmulatorFixture
    let vehicles = "/v1/providers/demo-project/vehicles"

    static func list(
        _ client: some TestClientProtocol,
        token: String = F.server,
        filter: String = "",
        orderBy: String? = nil,
        pageSize: Int? = nil,
        pageToken: String? = nil,
        project: String = F.project
    ) async throws -> (HTTPResponse.Status, JSONObject) {
        var body = JSONObject()
        body["resourceNames"] = [.string("projects/\(project)")]
        body["filter"] = .string(filter)
        if let orderBy { body["orderBy"] = .string(orderBy) }
        if let pageSize { body["pageSize"] = .integer(Int64(pageSize)) }
        if let pageToken { body["pageToken"] = .string(pageToken) }
        return try await client.call(.post, "/v2/entries:list?prettyPrint=false", token: token, body: body.jsonText)
    }

    static func entries(_ answer: JSONObject) -> [JSONObject] {
        answer["entries"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    static func decision(_ entry: JSONObject) -> JSONObject? {
        entry["jsonPayload"]?.objectValue?["fleetauthDecision"]?.objectValue
    }

    @Test("each call writes one entry in Fleet Engine's shape, refusals with the check that failed")
    func entries() async throws {
        let clock = ManualClock()
        let server = EmulatorServer(accounts: F.accounts, store: try SQLiteFleetStore(inMemory: ()), clock: clock)
        try await Application(router: server.router).test(.router) { client in
            let created = try await client.call(.post, "\(vehicles)?vehicleId=v1", token: F.server, body: F.vehicleBody)
            #expect(created.0 == .ok)
            _ = try await client.call(.get, "\(vehicles)/v1", token: F.server + "A")
            _ = try await client.call(.get, "\(vehicles)/v1", token: F.driver("v2"))
            _ = try await client.call(.get, "\(vehicles)/v1", token: nil)
            _ = try await client.call(.get, "\(vehicles)/missing", token: F.server)

            let (status, answer) = try await Self.list(client, filter: #"labels.vehicle_id="v1""#)
            #expect(status == .ok)
            let entries = Self.entries(answer)
            try #require(entries.count == 4)
            let names = entries.compactMap { $0["logName"]?.stringValue }
            #expect(
                names == [
                    "projects/demo-project/logs/fleetengine.googleapis.com%2Fcreate_vehicle",
                    "projects/demo-project/logs/fleetengine.googleapis.com%2Fget_vehicle",
                    "projects/demo-project/logs/fleetengine.googleapis.com%2Fget_vehicle",
                    "projects/demo-project/logs/fleetengine.googleapis.com%2Fget_vehicle",
                ]
            )
            let first = entries[0]
            #expect(first["resource"]?.objectValue?["type"]?.stringValue == "fleetengine.googleapis.com/Fleet")
            #expect(
                first["resource"]?.objectValue?["labels"]?.objectValue?["resource_container"]?.stringValue
                    == "projects/demo-project"
            )
            #expect(first["severity"]?.stringValue == "INFO")
            let payload = try #require(first["jsonPayload"]?.objectValue)
            #expect(payload["@type"]?.stringValue == "type.googleapis.com/maps.fleetengine.v1.CreateVehicleLog")
            #expect(payload["request"]?.objectValue?["vehicleId"]?.stringValue == "v1")
            #expect(payload["response"]?.objectValue?["vehicleState"]?.stringValue == "OFFLINE")
            #expect(Self.decision(first)?["outcome"]?.stringValue == "ALLOWED")

            let forged = try #require(Self.decision(entries[1]))
            #expect(forged["outcome"]?.stringValue == "REFUSED")
            #expect(forged["reason"]?.stringValue == "invalid_signature")
            #expect(entries[1]["severity"]?.stringValue == "WARNING")
            #expect(
                entries[1]["jsonPayload"]?.objectValue?["errorResponse"]?.objectValue?["httpStatusCode"]?.integerValue
                    == 401
            )
            let claims = try #require(Self.decision(entries[2]))
            #expect(claims["check"]?.stringValue == "claims")
            #expect(claims["explanation"]?.stringValue?.contains("v2") ?? false, "\(claims)")
            #expect(Self.decision(entries[3])?["check"]?.stringValue == "credentials")

            // No entry holds a token.
            let text = answer.jsonText
            #expect(!text.contains(F.server.split(separator: ".")[2]))
            #expect(!text.contains(F.driver("v2").split(separator: ".").last!))

            // A call that passed authorization and failed on its own terms is an allowed call with its error.
            let (_, missing) = try await Self.list(client, filter: #"labels.vehicle_id="missing""#)
            let notFound = try #require(Self.entries(missing).first)
            #expect(Self.decision(notFound)?["outcome"]?.stringValue == "ALLOWED")
            #expect(
                notFound["jsonPayload"]?.objectValue?["errorResponse"]?.objectValue?["code"]?.stringValue == "NOT_FOUND"
            )
        }
    }

    @Test("an expired token's entry says when it expired and what the clock read")
    func expired() async throws {
        let clock = ManualClock()
        let server = EmulatorServer(accounts: F.accounts, store: try SQLiteFleetStore(inMemory: ()), clock: clock)
        let driver = F.driver("v1")
        clock.advance(by: .seconds(7200))
        try await Application(router: server.router).test(.router) { client in
            let (status, _) = try await client.call(.get, "\(vehicles)/v1", token: driver)
            #expect(status == .unauthorized)
            let reader = try FleetEngineTokenMinter(signer: LocalKeySigner(key: F.serverKey))
                .mintSynchronously(.server, now: clock.currentDate).jwt
            let (_, answer) = try await Self.list(client, token: reader, filter: "severity>=WARNING")
            let decision = try #require(Self.entries(answer).first.flatMap(Self.decision))
            #expect(decision["reason"]?.stringValue == "expired")
            #expect(decision["explanation"]?.stringValue?.contains("expired at") ?? false)
            #expect(decision["claims"]?.objectValue?["authorization"] != nil)
        }
    }

    @Test("reading needs a token that reads the whole fleet of that provider")
    func readers() async throws {
        let server = EmulatorServer(accounts: F.accounts, store: try SQLiteFleetStore(inMemory: ()))
        try await Application(router: server.router).test(.router) { client in
            #expect(try await Self.list(client, token: F.server, project: "other-project").0 == .forbidden)
            let (status, answer) = try await Self.list(client, token: F.driver("v1"))
            #expect(status == .forbidden && answer["error"]?.objectValue?["status"]?.stringValue == "PERMISSION_DENIED")
            #expect(try await Self.list(client, token: F.server, filter: "labels.x=(").0 == .badRequest)
        }
    }

    @Test("pages follow the order asked for and go on where the last one ended")
    func paging() async throws {
        let clock = ManualClock()
        let server = EmulatorServer(accounts: F.accounts, store: try SQLiteFleetStore(inMemory: ()), clock: clock)
        try await Application(router: server.router).test(.router) { client in
            for index in 0..<5 {
                _ = try await client.call(.get, "\(vehicles)/v\(index)", token: F.server)
                clock.advance(by: .seconds(1))
            }
            var seen: [String] = []
            var token: String?
            repeat {
                let (_, answer) = try await Self.list(client, orderBy: "timestamp desc", pageSize: 2, pageToken: token)
                let labels = Self.entries(answer).compactMap { $0["labels"]?.objectValue?["vehicle_id"]?.stringValue }
                seen += labels
                token = answer["nextPageToken"]?.stringValue
            } while token != nil
            #expect(seen == ["v4", "v3", "v2", "v1", "v0"])
        }
    }

    @Test("filters: comparisons, has, regular expressions, severity and time order, NOT, OR before AND")
    func filters() throws {
        var entry = JSONObject()
        entry["severity"] = "WARNING"
        entry["timestamp"] = "2026-12-01T02:01:42.408823Z"
        entry["logName"] = "projects/p/logs/fleetengine.googleapis.com%2Fupdate_vehicle"
        entry["labels"] = ["vehicle_id": "v1"]
        entry["jsonPayload"] = ["request": ["vehicle": ["attributes": [["key": "tier", "value": "gold"]]]]]
        let cases: [(String, Bool)] = [
            (#"labels.vehicle_id="v1""#, true),
            (#"labels.vehicle_id!="v1""#, false),
            (#"labels.trip_id!="t1""#, true),
            (#"labels.trip_id="t1""#, false),
            ("severity>=WARNING", true),
            ("severity>ERROR", false),
            ("severity<error", true),
            (#"timestamp>="2026-12-01T02:01:42.408823+0000""#, true),
            (#"timestamp>="2026-12-01T03:00:00+01:00""#, true),
            ("timestamp<2026-12-01T02:00:00Z", false),
            (#"logName:"UPDATE_VEHICLE""#, true),
            ("labels.vehicle_id:*", true),
            ("labels.task_id:*", false),
            (#"logName=~"update_(vehicle|trip)$""#, true),
            (#"logName!~"update""#, false),
            (#"jsonPayload.request.vehicle.attributes.value="gold""#, true),
            (#"NOT labels.vehicle_id="v1""#, false),
            (#"-labels.vehicle_id="v1""#, false),
            (#"labels.vehicle_id="v2" OR labels.vehicle_id="v1" AND severity=WARNING"#, true),
            (#"labels.vehicle_id="v2" OR (labels.vehicle_id="v1" AND severity=ERROR)"#, false),
            (#"labels.vehicle_id=("v2" OR "v1")"#, true),
            (#"labels.vehicle_id="v1" severity=INFO"#, false),
            ("gold", true),
            (#""silver""#, false),
            ("", true),
        ]
        for (text, expected) in cases {
            #expect(try LogFilter(text).matches(entry) == expected, "\(text)")
        }
        for bad in ["labels.x=(", "(a=b", #"a="b"#, "a=~\"(\"", String(repeating: "(", count: 40) + "a=b"] {
            #expect(throws: GoogleAPIError.self, "\(bad)") { try LogFilter(bad) }
        }
    }

    @Test("times are written in UTC with microseconds, as Cloud Logging writes them")
    func timestamps() {
        // 2026-12-04T01:00:50Z, plus fractions a double holds exactly.
        let second = 1_796_346_050.0
        #expect(
            RequestLogEntryBuilder.timestamp(microseconds: RequestLog.microseconds(Date(timeIntervalSince1970: second)))
                == "2026-12-04T01:00:50.000000Z"
        )
        #expect(
            RequestLogEntryBuilder.timestamp(
                microseconds: RequestLog.microseconds(Date(timeIntervalSince1970: second + 0.0625))
            )
                == "2026-12-04T01:00:50.062500Z"
        )
        #expect(
            RequestLogEntryBuilder.timestamp(
                microseconds: RequestLog.microseconds(Date(timeIntervalSince1970: second + 0.875))
            )
                == "2026-12-04T01:00:50.875000Z"
        )
    }

    @Test("the log keeps at most its capacity, oldest first out, and nothing past its retention")
    func retention() async throws {
        let clock = ManualClock()
        let log = RequestLog(
            configuration: .init(capacity: 3, retention: .seconds(60)),
            store: try SQLiteFleetStore(inMemory: ()),
            clock: clock
        )
        for index in 0..<5 {
            log.record(Self.record(vehicle: "v\(index)", at: clock.currentDate))
        }
        #expect(try await Self.vehicleIDs(log) == ["v2", "v3", "v4"])
        clock.advance(by: .seconds(61))
        #expect(try await Self.vehicleIDs(log).isEmpty)
    }

    @Test("entries are kept in the store: a new emulator on the same database lists them, IDs never repeat")
    func persistence() async throws {
        let path = try FleetStoreDriver.temporaryPath()
        let clock = ManualClock()
        let first = RequestLog(store: try SQLiteFleetStore(path: path), clock: clock)
        first.record(Self.record(vehicle: "v1", at: clock.currentDate))
        let before = try await Self.all(first)
        let second = RequestLog(store: try SQLiteFleetStore(path: path), clock: clock)
        second.record(Self.record(vehicle: "v2", at: clock.currentDate))
        let after = try await Self.all(second)
        #expect(after.map { $0["labels"]?.objectValue?["vehicle_id"]?.stringValue } == ["v1", "v2"])
        #expect(after.first?["insertId"] == before.first?["insertId"])
        #expect(Set(after.compactMap { $0["insertId"]?.stringValue }).count == 2)
    }

    @Test("a store that cannot take entries drops and counts them; the calls they describe are answered")
    func lostStore() async throws {
        let path = try FleetStoreDriver.temporaryPath()
        let server = EmulatorServer(accounts: F.accounts, store: try SQLiteFleetStore(path: path), clock: ManualClock())
        let metrics = server.metrics
        try await Application(router: server.router).test(.router) { client in
            #expect(
                try await client.call(.post, "\(vehicles)?vehicleId=v1", token: F.server, body: F.vehicleBody).0 == .ok
            )
            #expect(Self.entries(try await Self.list(client).1).count == 1)
            try FileManager.default.removeItem(atPath: SQLiteFleetStore.requestLogPath(for: path))
            // The read is answered; its entry cannot be written to a log whose file is gone.
            #expect(try await client.call(.get, "\(vehicles)/v1", token: F.server).0 == .ok)
            _ = try await Self.list(client)
            #expect(metrics.text.contains(#"fleet_engine_request_log_entries_total{outcome="dropped"} 1"#))
        }
    }

    @Test("calls of one token share its decision; each token's entries carry its own claims")
    func decisionsPerToken() async throws {
        let server = EmulatorServer(
            accounts: F.accounts,
            store: try SQLiteFleetStore(inMemory: ()),
            clock: ManualClock()
        )
        try await Application(router: server.router).test(.router) { client in
            for vehicle in ["v1", "v2"] {
                let created = try await client.call(
                    .post,
                    "\(vehicles)?vehicleId=\(vehicle)",
                    token: F.server,
                    body: F.vehicleBody
                )
                #expect(created.0 == .ok)
            }
            for _ in 0..<2 {
                for vehicle in ["v1", "v2"] {
                    #expect(try await client.call(.get, "\(vehicles)/\(vehicle)", token: F.driver(vehicle)).0 == .ok)
                }
            }
            #expect(try await client.call(.get, "\(vehicles)/v2", token: F.driver("v1")).0 == .forbidden)
            #expect(try await client.call(.get, "\(vehicles)/missing", token: F.driver("missing")).0 == .notFound)

            let entries = Self.entries(try await Self.list(client, filter: "logName:get_vehicle").1)
            try #require(entries.count == 6)
            let seen = entries.map { entry in
                let decision = Self.decision(entry)
                let claimed = decision?["claims"]?.objectValue?["authorization"]?.objectValue?["vehicleid"]
                return [
                    entry["labels"]?.objectValue?["vehicle_id"]?.stringValue, claimed?.stringValue,
                    decision?["outcome"]?.stringValue, decision?["check"]?.stringValue,
                ]
            }
            #expect(
                seen == [
                    ["v1", "v1", "ALLOWED", "policy"], ["v2", "v2", "ALLOWED", "policy"],
                    ["v1", "v1", "ALLOWED", "policy"], ["v2", "v2", "ALLOWED", "policy"],
                    ["v2", "v1", "REFUSED", "claims"], ["missing", "missing", "ALLOWED", "request"],
                ]
            )
            // The failed call's decision says how it failed; the accepted calls of the same token do not.
            let failed = Self.decision(entries[5])?["explanation"]?.stringValue ?? ""
            #expect(failed.contains("failed on its own terms"))
            #expect(Self.decision(entries[0])?["explanation"] == Self.decision(entries[2])?["explanation"])
        }
    }

    @Test("the writer's quick provider reading agrees with the full one")
    func providerOfName() {
        let names = [
            "/v1/providers/p/vehicles/v1", "providers/p", "/v1/providers/p:search", "providers/a/providers/b",
            "/v1/providers//providers/q", "/v1/vehicles/providers/x", "provider_id=p&name=providers%2Fp",
            "providers/:x/vehicles/v", "", "/", "providers", "/v1/providers/p/deliveryVehicles/d/tasks",
            "/v1/trips/t/providers/p",
        ]
        for name in names {
            #expect(ResourceNames.provider(in: name) == ResourceNames(name: name).provider, "\(name)")
        }
    }

    @Test("an entry stored by the first version of the log's format is still read")
    func storedFormatVersion1() throws {
        var facts = JSONObject()
        facts["rpc"] = "maps.fleetengine.v1.VehicleService/GetVehicle"
        facts["transport"] = "rest"
        facts["target"] = "/v1/providers/p/vehicles/v1"
        facts["received"] = .integer(1_700_000_000_000_001)
        facts["logged"] = .integer(1_700_000_000_000_002)
        facts["insertId"] = "abc"
        facts["provider"] = "p"
        facts["error"] = ["status": .integer(404), "code": "NOT_FOUND", "message": "gone"]
        facts["decision"] = ["outcome": "ALLOWED"]
        let chunk = { (bytes: [UInt8]) in
            (0..<4).map { UInt8(truncatingIfNeeded: UInt32(bytes.count) >> ($0 * 8)) } + bytes
        }
        let version1 = [1] + chunk(facts.jsonBytes) + chunk([]) + chunk([])
        let read = try StoredRequest(decoding: version1, types: [:])
        #expect(
            [read.rpc, read.transport, read.target, read.insertID, read.provider] == [
                "maps.fleetengine.v1.VehicleService/GetVehicle", "rest", "/v1/providers/p/vehicles/v1", "abc", "p",
            ]
        )
        #expect(read.received == 1_700_000_000_000_001 && read.logged == 1_700_000_000_000_002)
        #expect(read.error?.status == 404 && read.error?.code == "NOT_FOUND" && read.error?.message == "gone")
        #expect(read.decision == ["outcome": "ALLOWED"] && read.request == nil && read.response == nil)

        // The current version reads back what it wrote, the same facts.
        let again = try StoredRequest(decoding: try read.encoded(), types: [:])
        #expect(try again.encoded() == read.encoded())
        #expect([again.target, again.insertID] == [read.target, read.insertID] && again.decision == read.decision)
        #expect(again.error?.message == "gone" && again.received == read.received)
    }

    static func record(vehicle: String, at date: Date) -> RequestLogRecord {
        RequestLogRecord(
            rpc: "maps.fleetengine.v1.VehicleService/GetVehicle",
            transport: .rest,
            target: "/v1/providers/p/vehicles/\(vehicle)",
            received: date
        )
    }

    /// The first page of provider p's entries, every entry allowed.
    static func all(_ log: RequestLog) async throws -> [JSONObject] {
        try await log.list(
            resourceNames: ["projects/p"],
            filter: "",
            orderBy: "",
            pageSize: 0,
            pageToken: "",
            allowed: { _ in true }
        ).entries
    }

    static func vehicleIDs(_ log: RequestLog) async throws -> [String?] {
        try await all(log).map { $0["labels"]?.objectValue?["vehicle_id"]?.stringValue }
    }
}
