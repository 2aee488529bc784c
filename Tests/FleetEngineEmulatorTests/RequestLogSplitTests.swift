import FleetAuthCore
import FleetAuthServerTesting
import FleetAuthTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FleetEngineEmulator

@Suite("Request log: split entries", .temporaryResources)
struct RequestLogSplitTests {
    typealias F = DeliveryFixture

    /// A batch of 500 tasks with long IDs: its entry holds 500 requests and 500 tasks, well over 256 KB.
    static func batch() -> String {
        let requests = (0..<500).map { index in
            let id = "task-\(index)-" + String(repeating: "x", count: 50)
            let task = F.task("DELIVERY", tracking: "parcel-\(index)-" + String(repeating: "p", count: 50))
            return #"{"taskId":"\#(id)","task":\#(task)}"#
        }
        return #"{"requests":[\#(requests.joined(separator: ","))]}"#
    }

    @Test("a call whose entry is over 256 KB is split into parts Google's way, and they page and filter")
    func longEntry() async throws {
        let server = EmulatorServer(
            accounts: F.accounts,
            store: try SQLiteFleetStore(inMemory: ()),
            clock: ManualClock()
        )
        try await Application(router: server.router).test(.router) { client in
            let (status, created) = try await client.call(
                .post,
                "/v1/providers/demo-project/tasks:batchCreate",
                token: F.server,
                body: Self.batch()
            )
            #expect(status == .ok)
            let ids = created["tasks"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } ?? []
            try #require(ids.count == 500)

            // One part a page, ascending: the token goes on inside the call's parts.
            var parts: [JSONObject] = []
            var token: String?
            repeat {
                let (_, answer) = try await RequestLogTests.list(
                    client,
                    token: F.server,
                    filter: #"logName:"batch_create_tasks""#,
                    pageSize: 1,
                    pageToken: token
                )
                parts += RequestLogTests.entries(answer)
                token = answer["nextPageToken"]?.stringValue
            } while token != nil && parts.count < 50
            try #require(parts.count >= 2, "one entry of \(parts.first?.jsonBytes.count ?? 0) bytes")
            #expect(parts.allSatisfy { $0.jsonBytes.count <= RequestLogEntryBuilder.entrySizeLimit })

            let splits = parts.compactMap { $0["split"]?.objectValue }
            try #require(splits.count == parts.count)
            let uid = try #require(splits[0]["uid"]?.stringValue)
            #expect(splits.map { $0["uid"]?.stringValue } == Array(repeating: uid, count: parts.count))
            #expect(splits.map { $0["index"]?.integerValue } == (0..<parts.count).map { Int64($0) })
            #expect(splits.allSatisfy { $0["totalSplits"]?.integerValue == Int64(parts.count) })
            #expect(parts.map { $0["insertId"]?.stringValue } == (0..<parts.count).map { "\(uid)-\($0)" })
            // What is outside the lists is in every part.
            for key in ["logName", "resource", "labels", "severity", "timestamp"] {
                #expect(Set(parts.map { $0[key] }).count == 1, "\(key) differs between parts")
            }
            let payloads = parts.compactMap { $0["jsonPayload"]?.objectValue }
            #expect(
                payloads.allSatisfy {
                    $0["@type"] == "type.googleapis.com/maps.fleetengine.delivery.log.v1.BatchCreateTasksLog"
                        && $0["header"] != nil && $0["fleetauthDecision"] != nil
                }
            )
            // The lists, joined in index order, are the call's.
            func joined(_ part: String, _ field: String) -> [JSONValue] {
                payloads.flatMap { $0[part]?.objectValue?[field]?.arrayValue ?? [] }
            }
            #expect(joined("request", "requests").count == 500)
            let logged = joined("response", "tasks").compactMap { $0.objectValue?["name"]?.stringValue }
            #expect(logged == ids)

            // Filters see each part, and the latest-first order gives the same parts.
            let (_, first) = try await RequestLogTests.list(client, token: F.server, filter: "split.index=0")
            #expect(RequestLogTests.entries(first).map { $0["insertId"] } == [parts[0]["insertId"]])
            let (_, all) = try await RequestLogTests.list(
                client,
                token: F.server,
                filter: #"split.uid="\#(uid)""#,
                orderBy: "timestamp desc"
            )
            #expect(Set(RequestLogTests.entries(all).map { $0["insertId"] }) == Set(parts.map { $0["insertId"] }))
        }
    }

    @Test("a split keeps the order of each list, puts the other fields in the first part, and keeps small entries")
    func rules() throws {
        var request = JSONObject()
        request["pageSize"] = .integer(10)
        request["requests"] = .array((0..<40).map { .string("request-\($0)-" + String(repeating: "r", count: 40)) })
        var response = JSONObject()
        response["tasks"] = .array((0..<60).map { .string("task-\($0)-" + String(repeating: "t", count: 40)) })
        response["nextPageToken"] = "more"
        var payload = JSONObject()
        payload["@type"] = "type.googleapis.com/maps.fleetengine.delivery.log.v1.ListTasksLog"
        payload["header"] = ["regionCode": "FI"]
        payload["request"] = .object(request)
        payload["response"] = .object(response)
        var entry = JSONObject()
        entry["insertId"] = "abc"
        entry["jsonPayload"] = .object(payload)
        entry["labels"] = ["task_id": "t1"]

        #expect(RequestLogEntryBuilder.split(entry) == [entry])
        let parts = RequestLogEntryBuilder.split(entry, limit: 1000)
        #expect(parts.count > 4)
        #expect(parts.allSatisfy { $0.jsonBytes.count <= 1000 })
        #expect(parts.allSatisfy { $0["labels"] == entry["labels"] })
        let payloads = parts.compactMap { $0["jsonPayload"]?.objectValue }
        #expect(payloads.allSatisfy { $0["header"] == payload["header"] && $0["@type"] == payload["@type"] })
        let pageSizes = payloads.map { $0["request"]?.objectValue?["pageSize"] }
        #expect(pageSizes == [.integer(10)] + Array(repeating: nil, count: parts.count - 1))
        #expect(payloads.filter { $0["response"]?.objectValue?["nextPageToken"] != nil }.count == 1)
        let spreadRequests = payloads.flatMap { $0["request"]?.objectValue?["requests"]?.arrayValue ?? [] }
        #expect(spreadRequests == request["requests"]?.arrayValue)
        let spreadTasks = payloads.flatMap { $0["response"]?.objectValue?["tasks"]?.arrayValue ?? [] }
        #expect(spreadTasks == response["tasks"]?.arrayValue)

        // An entry with no list to spread stays whole, however long.
        var long = entry
        long["jsonPayload"] = ["request": ["note": .string(String(repeating: "n", count: 5000))]]
        #expect(RequestLogEntryBuilder.split(long, limit: 1000) == [long])
    }
}
