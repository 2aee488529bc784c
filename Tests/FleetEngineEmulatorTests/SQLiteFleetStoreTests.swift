import FleetAuthCore
import FleetEngineEmulator
import Foundation
import Testing

@Suite("SQLite store")
struct SQLiteFleetStoreTests {
    static func temporaryPath() throws -> String {
        let directory = NSTemporaryDirectory() + "fleet-store-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory + "/fleet.sqlite"
    }

    @Test("writes survive closing and reopening the database file")
    func durability() async throws {
        let path = try Self.temporaryPath()
        do {
            let store = try SQLiteFleetStore(path: path)
            try await store.insertVehicle(provider: "p", id: "v1", body: ["vehicleState": "ONLINE"])
            try await store.insertTrip(
                provider: "p", id: "t1",
                trip: StoredTrip(id: "t1", body: ["tripStatus": "NEW"], vehicleID: "v1", isActive: true))
        }
        let reopened = try SQLiteFleetStore(path: path)
        #expect(try await reopened.vehicle(provider: "p", id: "v1") == ["vehicleState": "ONLINE"])
        #expect(try await reopened.trip(provider: "p", id: "t1")?.vehicleID == "v1")
        #expect(
            try await reopened.trips(provider: "p", vehicleID: "v1", activeOnly: true, afterID: nil, limit: 10).map(
                \.id)
                == ["t1"])
    }

    @Test("concurrent read-modify-write updates of one vehicle lose nothing")
    func concurrentUpdates() async throws {
        let store = try SQLiteFleetStore(path: try Self.temporaryPath())
        try await store.insertVehicle(provider: "p", id: "v1", body: ["count": 0])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<25 {
                        _ = try await store.updateVehicle(provider: "p", id: "v1") { body in
                            var body = body
                            body["count"] = .integer((body["count"]?.integerValue ?? 0) + 1)
                            // Two fields written together must never interleave with another writer's.
                            body["lastWriter"] = .string("w\(worker)-s\(step)")
                            body["lastWriterCopy"] = .string("w\(worker)-s\(step)")
                            return body
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let body = try #require(try await store.vehicle(provider: "p", id: "v1"))
        #expect(body["count"] == 200)
        #expect(body["lastWriter"] == body["lastWriterCopy"])
    }

    @Test("duplicates, missing resources and deleting a busy vehicle are refused with Google codes")
    func errors() async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        try await store.insertVehicle(provider: "p", id: "v1", body: [:])
        await #expect(throws: FleetEngineError.alreadyExists("")) {
            try await store.insertVehicle(provider: "p", id: "v1", body: [:])
        }
        // Same ID, other provider: a different resource.
        try await store.insertVehicle(provider: "q", id: "v1", body: [:])
        await #expect(throws: FleetEngineError.notFound("")) {
            _ = try await store.updateVehicle(provider: "p", id: "none") { $0 }
        }
        try await store.insertTrip(
            provider: "p", id: "t1", trip: StoredTrip(id: "t1", body: [:], vehicleID: "v1", isActive: true))
        await #expect(throws: FleetEngineError.failedPrecondition("")) {
            try await store.deleteVehicle(provider: "p", id: "v1")
        }
        _ = try await store.updateTrip(provider: "p", id: "t1") { trip in
            var trip = trip
            trip.isActive = false
            return trip
        }
        try await store.deleteVehicle(provider: "p", id: "v1")
        #expect(try await store.vehicle(provider: "p", id: "v1") == nil)
        await #expect(throws: FleetEngineError.notFound("")) { try await store.deleteTrip(provider: "p", id: "none") }
    }

    @Test("listing pages in ID order")
    func paging() async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        for index in [3, 1, 2, 5, 4] {
            try await store.insertVehicle(provider: "p", id: "v\(index)", body: ["n": .integer(Int64(index))])
        }
        let first = try await store.vehicles(provider: "p", afterID: nil, limit: 2)
        #expect(first.map(\.id) == ["v1", "v2"])
        let second = try await store.vehicles(provider: "p", afterID: first.last?.id, limit: 10)
        #expect(second.map(\.id) == ["v3", "v4", "v5"])
    }
}
