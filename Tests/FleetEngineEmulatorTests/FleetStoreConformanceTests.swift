import FleetAuthCore
import FleetEngineEmulator
import Foundation
import Testing

/// A way to open a ``FleetStore``: every driver runs the same conformance suite.
struct FleetStoreDriver: Sendable, CustomTestStringConvertible {
    let name: String
    /// A new, empty store, and (for drivers that keep data) a way to open the same data again.
    let open: @Sendable () throws -> (store: any FleetStore, reopen: (@Sendable () throws -> any FleetStore)?)

    var testDescription: String { name }

    static let sqliteFile = FleetStoreDriver(name: "SQLite file") {
        let directory = NSTemporaryDirectory() + "fleet-store-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + EmulatorServer.databaseFileName
        return (try SQLiteFleetStore(path: path), { try SQLiteFleetStore(path: path) })
    }
    static let sqliteInMemory = FleetStoreDriver(name: "SQLite in memory") {
        (try SQLiteFleetStore(inMemory: ()), nil)
    }

    static let all = [sqliteFile, sqliteInMemory]
    static let persistent = all.filter { (try? $0.open().reopen) != nil }
}

/// What every ``FleetStore`` must do, whatever keeps the data.
@Suite("FleetStore conformance")
struct FleetStoreConformanceTests {
    static func trip(_ id: String, vehicle: String?, active: Bool = true) -> StoredTrip {
        StoredTrip(id: id, body: ["tripStatus": active ? "NEW" : "COMPLETE"], vehicleID: vehicle, isActive: active)
    }

    @Test("writes survive closing and reopening the store", arguments: FleetStoreDriver.persistent)
    func durability(_ driver: FleetStoreDriver) async throws {
        let (store, reopen) = try driver.open()
        try await store.insertVehicle(provider: "p", id: "v1", body: ["vehicleState": "ONLINE"])
        try await store.insertTrip(provider: "p", id: "t1", trip: Self.trip("t1", vehicle: "v1"))
        let reopened = try #require(try reopen?())
        #expect(try await reopened.vehicle(provider: "p", id: "v1") == ["vehicleState": "ONLINE"])
        #expect(try await reopened.trip(provider: "p", id: "t1")?.vehicleID == "v1")
        let active = try await reopened.trips(provider: "p", vehicleID: "v1", activeOnly: true, afterID: nil, limit: 10)
        #expect(active.map(\.id) == ["t1"])
    }

    @Test(
        "concurrent read-modify-write updates of one vehicle lose nothing and never interleave",
        arguments: FleetStoreDriver.all)
    func concurrentUpdates(_ driver: FleetStoreDriver) async throws {
        let store = try driver.open().store
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

    @Test(
        "duplicates, missing records and deleting a busy vehicle are the store's own errors",
        arguments: FleetStoreDriver.all)
    func errors(_ driver: FleetStoreDriver) async throws {
        let store = try driver.open().store
        try await store.insertVehicle(provider: "p", id: "v1", body: [:])
        await #expect(throws: StoreError.alreadyExists("")) {
            try await store.insertVehicle(provider: "p", id: "v1", body: [:])
        }
        // Same ID, other provider: a different resource.
        try await store.insertVehicle(provider: "q", id: "v1", body: [:])
        await #expect(throws: StoreError.notFound("")) {
            _ = try await store.updateVehicle(provider: "p", id: "none") { $0 }
        }
        try await store.insertTrip(provider: "p", id: "t1", trip: Self.trip("t1", vehicle: "v1"))
        await #expect(throws: StoreError.alreadyExists("")) {
            try await store.insertTrip(provider: "p", id: "t1", trip: Self.trip("t1", vehicle: nil))
        }
        await #expect(throws: StoreError.conflict("")) { try await store.deleteVehicle(provider: "p", id: "v1") }
        _ = try await store.updateTrip(provider: "p", id: "t1") { trip in
            var trip = trip
            trip.isActive = false
            return trip
        }
        try await store.deleteVehicle(provider: "p", id: "v1")
        #expect(try await store.vehicle(provider: "p", id: "v1") == nil)
        #expect(try await store.vehicle(provider: "q", id: "v1") == [:])
        await #expect(throws: StoreError.notFound("")) { try await store.deleteVehicle(provider: "p", id: "v1") }
        await #expect(throws: StoreError.notFound("")) { try await store.deleteTrip(provider: "p", id: "none") }
        await #expect(throws: StoreError.notFound("")) {
            _ = try await store.updateTrip(provider: "p", id: "none") { $0 }
        }
    }

    @Test("an error thrown by a transform is rethrown as it is and nothing is written", arguments: FleetStoreDriver.all)
    func failedTransform(_ driver: FleetStoreDriver) async throws {
        struct Refusal: Error, Equatable {}
        let store = try driver.open().store
        try await store.insertVehicle(provider: "p", id: "v1", body: ["n": 1])
        try await store.insertTrip(provider: "p", id: "t1", trip: Self.trip("t1", vehicle: "v1"))
        await #expect(throws: Refusal()) {
            _ = try await store.updateVehicle(provider: "p", id: "v1") { _ in throw Refusal() }
        }
        await #expect(throws: Refusal()) {
            _ = try await store.updateTrip(provider: "p", id: "t1") { _ in throw Refusal() }
        }
        #expect(try await store.vehicle(provider: "p", id: "v1") == ["n": 1])
        #expect(try await store.trip(provider: "p", id: "t1") == Self.trip("t1", vehicle: "v1"))
    }

    @Test(
        "an update answers with the vehicle's active trips, read with it; trips are listed by vehicle and state",
        arguments: FleetStoreDriver.all)
    func assignment(_ driver: FleetStoreDriver) async throws {
        let store = try driver.open().store
        try await store.insertVehicle(provider: "p", id: "v1", body: [:])
        try await store.insertTrip(provider: "p", id: "t2", trip: Self.trip("t2", vehicle: "v1"))
        try await store.insertTrip(provider: "p", id: "t1", trip: Self.trip("t1", vehicle: "v1"))
        try await store.insertTrip(provider: "p", id: "t3", trip: Self.trip("t3", vehicle: "v1", active: false))
        try await store.insertTrip(provider: "p", id: "t4", trip: Self.trip("t4", vehicle: nil))
        try await store.insertTrip(provider: "q", id: "t5", trip: Self.trip("t5", vehicle: "v1"))
        let updated = try await store.updateVehicle(provider: "p", id: "v1") { _ in ["vehicleState": "ONLINE"] }
        #expect(updated.body == ["vehicleState": "ONLINE"])
        #expect(updated.activeTrips.map(\.id) == ["t1", "t2"])
        let all = try await store.trips(provider: "p", vehicleID: "v1", activeOnly: false, afterID: nil, limit: 10)
        #expect(all.map(\.id) == ["t1", "t2", "t3"])
        let everything = try await store.trips(
            provider: "p", vehicleID: nil, activeOnly: false, afterID: "t1", limit: 2)
        #expect(everything.map(\.id) == ["t2", "t3"])
        // Reassigning a trip moves it between vehicles' lists.
        try await store.insertVehicle(provider: "p", id: "v2", body: [:])
        _ = try await store.updateTrip(provider: "p", id: "t2") { trip in
            var trip = trip
            trip.vehicleID = "v2"
            return trip
        }
        let moved = try await store.trips(provider: "p", vehicleID: "v2", activeOnly: true, afterID: nil, limit: 10)
        #expect(moved.map(\.id) == ["t2"])
        #expect(try await store.updateVehicle(provider: "p", id: "v1") { $0 }.activeTrips.map(\.id) == ["t1"])
    }

    @Test("vehicles are listed in ID order, a page at a time", arguments: FleetStoreDriver.all)
    func paging(_ driver: FleetStoreDriver) async throws {
        let store = try driver.open().store
        for index in [3, 1, 2, 5, 4] {
            try await store.insertVehicle(provider: "p", id: "v\(index)", body: ["n": .integer(Int64(index))])
        }
        try await store.insertVehicle(provider: "q", id: "v0", body: [:])
        let first = try await store.vehicles(provider: "p", afterID: nil, limit: 2)
        #expect(first.map(\.id) == ["v1", "v2"])
        #expect(first.first?.body == ["n": 1])
        let second = try await store.vehicles(provider: "p", afterID: first.last?.id, limit: 10)
        #expect(second.map(\.id) == ["v3", "v4", "v5"])
    }
}
