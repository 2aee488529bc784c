import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerTesting
import FleetAuthTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import GRDB
import PostgresNIO
import SwiftProtobuf
import Testing

/// A way to open the emulator's store (both APIs): every driver runs the same conformance suites.
struct FleetStoreDriver: Sendable, CustomTestStringConvertible {
    let name: String
    /// A new, empty store, and (for drivers that keep data) a way to open the same data again.
    let open:
        @Sendable () async throws -> (
            store: any EmulatorStore, reopen: (@Sendable () async throws -> any EmulatorStore)?
        )

    var testDescription: String { name }

    static func temporaryPath() throws -> String {
        let directory = try TestResources.required().temporaryDirectory("fleet-store")
        return directory + "/" + EmulatorServer.databaseFileName
    }

    static let sqliteFile = FleetStoreDriver(name: "SQLite file") {
        let path = try temporaryPath()
        return (try SQLiteFleetStore(path: path), { try SQLiteFleetStore(path: path) })
    }
    static let sqliteInMemory = FleetStoreDriver(name: "SQLite in memory") {
        (try SQLiteFleetStore(inMemory: ()), nil)
    }

    /// A fresh database on the PostgreSQL server the tests are given (see ``PostgresTestServer``).
    static let postgres = FleetStoreDriver(name: "PostgreSQL") {
        let resources = try TestResources.required()
        let url = try await resources.freshDatabase()
        return (
            try await PostgresFleetStore.connect(url, maximumConnections: 4, in: resources.pools),
            { try await PostgresFleetStore.connect(url, maximumConnections: 4, in: resources.pools) }
        )
    }

    static let all = [sqliteFile, sqliteInMemory] + (PostgresTestServer.url == nil ? [] : [postgres])
    static let persistent = [sqliteFile] + (PostgresTestServer.url == nil ? [] : [postgres])
}

/// What every ``OnDemandStore`` must do, whatever keeps the data.
@Suite("OnDemandStore conformance", .temporaryResources)
struct EmulatorStoreConformanceTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func vehicle(_ state: FleetEngineV1.VehicleState = .online, capacity: Int32 = 4) -> FleetEngineV1.Vehicle {
        var vehicle = FleetEngineV1.Vehicle()
        vehicle.vehicleState = state
        vehicle.maximumCapacity = capacity
        return vehicle
    }

    static func trip(_ id: String, vehicle: String?, active: Bool = true) -> StoredTrip {
        var trip = FleetEngineV1.Trip()
        trip.tripStatus = active ? .new : .complete
        trip.vehicleID = vehicle ?? ""
        return StoredTrip(id: id, trip: trip, updatedAt: t0)
    }

    @Test("writes survive closing and reopening the store", arguments: FleetStoreDriver.persistent)
    func durability(_ driver: FleetStoreDriver) async throws {
        let (store, reopen) = try await driver.open()
        try await store.insertVehicle(Self.vehicle(), provider: "p", id: "v1")
        try await store.insertTrip(Self.trip("t1", vehicle: "v1"), provider: "p")
        let reopened = try #require(try await reopen?())
        #expect(try await reopened.vehicle(provider: "p", id: "v1") == Self.vehicle())
        let trip = try await reopened.trip(provider: "p", id: "t1")
        #expect(trip?.vehicleID == "v1" && trip?.updatedAt == Self.t0)
        let active = try await reopened.trips(provider: "p", vehicleID: "v1", activeOnly: true, afterID: nil, limit: 10)
        #expect(active.map(\.id) == ["t1"])
    }

    @Test(
        "concurrent read-modify-write updates of one vehicle lose nothing and never interleave",
        arguments: FleetStoreDriver.all
    )
    func concurrentUpdates(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.insertVehicle(Self.vehicle(capacity: 1), provider: "p", id: "v1")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<25 {
                        _ = try await store.updateVehicle(provider: "p", id: "v1") { vehicle, _ in
                            var vehicle = vehicle
                            vehicle.maximumCapacity += 1
                            // Two fields written together must never interleave with another writer's.
                            vehicle.currentRouteSegment = "w\(worker)-s\(step)"
                            vehicle.licensePlate.countryCode = "w\(worker)-s\(step)"
                            return vehicle
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let vehicle = try #require(try await store.vehicle(provider: "p", id: "v1"))
        #expect(vehicle.maximumCapacity == 201)
        #expect(vehicle.currentRouteSegment == vehicle.licensePlate.countryCode)
    }

    @Test(
        "concurrent location updates of many vehicles (batched where the store batches) lose nothing, and the index follows",
        arguments: FleetStoreDriver.all
    )
    func concurrentLocationUpdates(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        let ids = (0..<10).map { "v\($0)" }
        for (index, id) in ids.enumerated() {
            var vehicle = Self.vehicle()
            vehicle.lastLocation.location.latitude = -80
            vehicle.lastLocation.location.longitude = Double(index)
            try await store.insertVehicle(vehicle, provider: "p", id: id)
        }
        // Four workers per vehicle, all at once: writes of different vehicles share batches, and writes of one
        // vehicle meet in them too. Only the location changes, each step one degree north of what was read.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in ids {
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<10 {
                            _ = try await store.updateVehicle(provider: "p", id: id) { vehicle, _ in
                                var vehicle = vehicle
                                vehicle.lastLocation.location.latitude += 1
                                vehicle.lastLocation.serverTime = .init(date: Self.t0)
                                return vehicle
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        for (index, id) in ids.enumerated() {
            let location = try #require(try await store.vehicle(provider: "p", id: id)).lastLocation
            #expect(location.location.latitude == -40, "\(id): 40 updates, each one degree")
            #expect(location.location.longitude == Double(index))
        }
        var query = VehicleQuery()
        query.area = [VehicleQuery.Box(lowLatitude: -40.5, highLatitude: -39.5, lowLongitude: -1, highLongitude: 20)]
        query.freshSince = Self.t0
        let positions = try await store.vehiclePositions(provider: "p", matching: query)
        #expect(
            Set(positions)
                == Set(ids.enumerated().map { VehiclePosition(id: $1, latitude: -40, longitude: Double($0)) })
        )
        query.area = [VehicleQuery.Box(lowLatitude: -80.5, highLatitude: -40.5, lowLongitude: -1, highLongitude: 20)]
        #expect(try await store.vehiclePositions(provider: "p", matching: query).isEmpty, "no stale place is indexed")
    }

    @Test(
        "two instances on the same data: each sees the other's writes at once, concurrent updates and trip assignments stay whole",
        arguments: FleetStoreDriver.persistent
    )
    func twoInstances(_ driver: FleetStoreDriver) async throws {
        let (a, reopen) = try await driver.open()
        let b = try #require(try await reopen?())
        try await a.insertVehicle(Self.vehicle(capacity: 0), provider: "p", id: "v1")
        try await a.insertVehicle(Self.vehicle(capacity: 0), provider: "p", id: "v2")
        #expect(try await b.vehicle(provider: "p", id: "v1") == Self.vehicle(capacity: 0))
        for index in 0..<10 { try await b.insertTrip(Self.trip("t\(index)", vehicle: nil), provider: "p") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (instance, store) in [(0, a), (1, b)] {
                group.addTask {
                    for step in 0..<40 {
                        _ = try await store.updateVehicle(provider: "p", id: "v1") { vehicle, _ in
                            var vehicle = vehicle
                            vehicle.maximumCapacity += 1
                            vehicle.currentRouteSegment = "i\(instance)-s\(step)"
                            vehicle.licensePlate.countryCode = "i\(instance)-s\(step)"
                            return vehicle
                        }
                    }
                }
                // Both instances move every trip back and forth between the vehicles.
                group.addTask {
                    for round in 0..<4 {
                        for index in 0..<10 {
                            _ = try await store.updateTrip(provider: "p", id: "t\(index)") { stored in
                                var stored = stored
                                stored.trip.vehicleID = (round + instance + index) % 2 == 0 ? "v1" : "v2"
                                return stored
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let vehicle = try #require(try await b.vehicle(provider: "p", id: "v1"))
        #expect(vehicle.maximumCapacity == 80)
        #expect(vehicle.currentRouteSegment == vehicle.licensePlate.countryCode)
        // Every trip is on exactly one vehicle, and both instances agree on which.
        for store in [a, b] {
            let onV1 = try await store.trips(provider: "p", vehicleID: "v1", activeOnly: true, afterID: nil, limit: 100)
            let onV2 = try await store.trips(provider: "p", vehicleID: "v2", activeOnly: true, afterID: nil, limit: 100)
            #expect(Set(onV1.map(\.id)).isDisjoint(with: onV2.map(\.id)))
            #expect(onV1.count + onV2.count == 10)
            for trip in onV1 + onV2 {
                #expect(try await store.trip(provider: "p", id: trip.id)?.vehicleID == trip.vehicleID)
            }
        }
    }

    @Test(
        "an instance that wrote a vehicle last updates the other instance's version, and a transform judges that version",
        arguments: FleetStoreDriver.persistent
    )
    func staleInstance(_ driver: FleetStoreDriver) async throws {
        struct Refusal: Error, Equatable {}
        let (a, reopen) = try await driver.open()
        let b = try #require(try await reopen?())
        try await a.insertVehicle(Self.vehicle(capacity: 1), provider: "p", id: "v1")
        _ = try await a.updateVehicle(provider: "p", id: "v1") { vehicle, _ in vehicle }
        // Another instance changes the vehicle and assigns it a trip.
        _ = try await b.updateVehicle(provider: "p", id: "v1") { vehicle, _ in
            var vehicle = vehicle
            vehicle.maximumCapacity = 5
            return vehicle
        }
        try await b.insertTrip(Self.trip("t1", vehicle: "v1"), provider: "p")
        // A transform that refuses the state `a` last saw accepts the current one.
        let updated = try await a.updateVehicle(provider: "p", id: "v1") { vehicle, trips in
            guard vehicle.maximumCapacity == 5, trips.map(\.id) == ["t1"] else { throw Refusal() }
            var vehicle = vehicle
            vehicle.maximumCapacity += 1
            return vehicle
        }
        #expect(updated.vehicle.maximumCapacity == 6 && updated.activeTrips.map(\.id) == ["t1"])
        // The trip's change alone (not the vehicle's) is seen too.
        _ = try await b.updateTrip(provider: "p", id: "t1") { stored in
            var stored = stored
            stored.trip.tripStatus = .canceled
            stored.updatedAt = Self.t0.addingTimeInterval(1)
            return stored
        }
        let after = try await a.updateVehicle(provider: "p", id: "v1") { vehicle, _ in vehicle }
        #expect(after.activeTrips.isEmpty)
        // Deleted and created again by the other instance: the new vehicle is what is updated.
        try await b.deleteVehicle(provider: "p", id: "v1")
        try await b.insertVehicle(Self.vehicle(capacity: 9), provider: "p", id: "v1")
        let recreated = try await a.updateVehicle(provider: "p", id: "v1") { vehicle, _ in vehicle }
        #expect(recreated.vehicle.maximumCapacity == 9)
        #expect(try await b.vehicle(provider: "p", id: "v1")?.maximumCapacity == 9)
        // A refusal of the current state still stands, and writes nothing.
        await #expect(throws: Refusal()) {
            _ = try await a.updateVehicle(provider: "p", id: "v1") { _, _ in throw Refusal() }
        }
    }

    @Test(
        "duplicates, missing records and deleting a busy vehicle are the store's own errors",
        arguments: FleetStoreDriver.all
    )
    func errors(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.insertVehicle(Self.vehicle(), provider: "p", id: "v1")
        await expectCode(StoreError.alreadyExists("")) {
            try await store.insertVehicle(Self.vehicle(), provider: "p", id: "v1")
        }
        // Same ID, other provider: a different resource.
        try await store.insertVehicle(Self.vehicle(.offline), provider: "q", id: "v1")
        await expectCode(StoreError.notFound("")) {
            _ = try await store.updateVehicle(provider: "p", id: "none") { vehicle, _ in vehicle }
        }
        try await store.insertTrip(Self.trip("t1", vehicle: "v1"), provider: "p")
        await expectCode(StoreError.alreadyExists("")) {
            try await store.insertTrip(Self.trip("t1", vehicle: nil), provider: "p")
        }
        // Assignment to a vehicle that does not exist is refused in the same transaction.
        await expectCode(StoreError.notFound("")) {
            try await store.insertTrip(Self.trip("t9", vehicle: "nowhere"), provider: "p")
        }
        await expectCode(StoreError.notFound("")) {
            _ = try await store.updateTrip(provider: "p", id: "t1") { stored in
                var stored = stored
                stored.trip.vehicleID = "nowhere"
                return stored
            }
        }
        await expectCode(StoreError.conflict("")) { try await store.deleteVehicle(provider: "p", id: "v1") }
        _ = try await store.updateTrip(provider: "p", id: "t1") { stored in
            var stored = stored
            stored.trip.tripStatus = .canceled
            return stored
        }
        try await store.deleteVehicle(provider: "p", id: "v1")
        #expect(try await store.vehicle(provider: "p", id: "v1") == nil)
        #expect(try await store.vehicle(provider: "q", id: "v1") == Self.vehicle(.offline))
        await expectCode(StoreError.notFound("")) { try await store.deleteVehicle(provider: "p", id: "v1") }
        await expectCode(StoreError.notFound("")) { try await store.deleteTrip(provider: "p", id: "none") }
        await expectCode(StoreError.notFound("")) {
            _ = try await store.updateTrip(provider: "p", id: "none") { $0 }
        }
    }

    @Test(
        "an error thrown by a transform is rethrown as it is and nothing is written",
        arguments: FleetStoreDriver.all
    )
    func failedTransform(_ driver: FleetStoreDriver) async throws {
        struct Refusal: Error, Equatable {}
        let store = try await driver.open().store
        try await store.insertVehicle(Self.vehicle(), provider: "p", id: "v1")
        try await store.insertTrip(Self.trip("t1", vehicle: "v1"), provider: "p")
        await #expect(throws: Refusal()) {
            _ = try await store.updateVehicle(provider: "p", id: "v1") { _, _ in throw Refusal() }
        }
        await #expect(throws: Refusal()) {
            _ = try await store.updateTrip(provider: "p", id: "t1") { _ in throw Refusal() }
        }
        #expect(try await store.vehicle(provider: "p", id: "v1") == Self.vehicle())
        #expect(try await store.trip(provider: "p", id: "t1") == Self.trip("t1", vehicle: "v1"))
    }

    @Test(
        "an update sees and answers the vehicle's active trips, read with it; trips are listed by vehicle and state",
        arguments: FleetStoreDriver.all
    )
    func assignment(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.insertVehicle(Self.vehicle(.offline), provider: "p", id: "v1")
        try await store.insertTrip(Self.trip("t2", vehicle: "v1"), provider: "p")
        try await store.insertTrip(Self.trip("t1", vehicle: "v1"), provider: "p")
        try await store.insertTrip(Self.trip("t3", vehicle: "v1", active: false), provider: "p")
        try await store.insertTrip(Self.trip("t4", vehicle: nil), provider: "p")
        try await store.insertVehicle(Self.vehicle(), provider: "q", id: "v1")
        try await store.insertTrip(Self.trip("t5", vehicle: "v1"), provider: "q")
        let updated = try await store.updateVehicle(provider: "p", id: "v1") { vehicle, trips in
            var vehicle = vehicle
            vehicle.currentTrips = trips.map(\.id)
            vehicle.vehicleState = .online
            return vehicle
        }
        #expect(updated.vehicle.currentTrips == ["t1", "t2"], "the transform saw the active trips")
        #expect(updated.activeTrips.map(\.id) == ["t1", "t2"])
        let all = try await store.trips(provider: "p", vehicleID: "v1", activeOnly: false, afterID: nil, limit: 10)
        #expect(all.map(\.id) == ["t1", "t2", "t3"])
        let everything = try await store.trips(
            provider: "p",
            vehicleID: nil,
            activeOnly: false,
            afterID: "t1",
            limit: 2
        )
        #expect(everything.map(\.id) == ["t2", "t3"])
        // Reassigning a trip moves it between vehicles' lists.
        try await store.insertVehicle(Self.vehicle(), provider: "p", id: "v2")
        _ = try await store.updateTrip(provider: "p", id: "t2") { stored in
            var stored = stored
            stored.trip.vehicleID = "v2"
            stored.updatedAt = Self.t0 + 60
            return stored
        }
        let moved = try await store.trips(provider: "p", vehicleID: "v2", activeOnly: true, afterID: nil, limit: 10)
        #expect(moved.map(\.id) == ["t2"] && moved.first?.updatedAt == Self.t0 + 60)
        #expect(try await store.updateVehicle(provider: "p", id: "v1") { v, _ in v }.activeTrips.map(\.id) == ["t1"])
        // Read together: the same vehicle and trips as read one by one.
        for id in ["v1", "v2"] {
            let together = try #require(try await store.vehicleWithActiveTrips(provider: "p", id: id))
            #expect(together.vehicle == (try await store.vehicle(provider: "p", id: id)))
            let trips = try await store.trips(provider: "p", vehicleID: id, activeOnly: true, afterID: nil, limit: 10)
            #expect(together.activeTrips == trips && !trips.isEmpty)
        }
        #expect(try await store.vehicleWithActiveTrips(provider: "p", id: "none") == nil)
    }

    @Test("trips unchanged since a time are listed by the store, a page at a time", arguments: FleetStoreDriver.all)
    func staleTrips(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        try await store.insertVehicle(Self.vehicle(), provider: "p", id: "v1")
        for index in 0..<12 {
            var trip = Self.trip(String(format: "t%02d", index), vehicle: index % 3 == 0 ? "v1" : nil)
            // Changed 0, 1, …, 11 minutes after t0.
            trip.updatedAt = Self.t0 + TimeInterval(60 * index)
            try await store.insertTrip(trip, provider: "p")
        }
        let cutoff = Self.t0 + 60 * 5
        func stale(vehicle: String?, after: String?, limit: Int) async throws -> [String] {
            try await store.trips(
                provider: "p",
                vehicleID: vehicle,
                activeOnly: true,
                updatedAtMost: cutoff,
                afterID: after,
                limit: limit
            ).map(\.id)
        }
        #expect(try await stale(vehicle: nil, after: nil, limit: 100) == ["t00", "t01", "t02", "t03", "t04", "t05"])
        #expect(try await stale(vehicle: nil, after: "t01", limit: 3) == ["t02", "t03", "t04"])
        #expect(try await stale(vehicle: "v1", after: nil, limit: 100) == ["t00", "t03"])
        // A trip changed a millisecond after the cutoff is not stale.
        #expect(
            try await store.trips(
                provider: "p",
                vehicleID: nil,
                activeOnly: false,
                updatedAtMost: Self.t0 + 60 * 5 - 0.001,
                afterID: nil,
                limit: 100
            ).map(\.id) == ["t00", "t01", "t02", "t03", "t04"]
        )
    }

    @Test("vehicles are listed in ID order, a page at a time", arguments: FleetStoreDriver.all)
    func paging(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        for index in [3, 1, 2, 5, 4] {
            try await store.insertVehicle(Self.vehicle(capacity: Int32(index)), provider: "p", id: "v\(index)")
        }
        try await store.insertVehicle(Self.vehicle(), provider: "q", id: "v0")
        let first = try await store.vehicles(provider: "p", afterID: nil, limit: 2)
        #expect(first.map(\.id) == ["v1", "v2"])
        #expect(first.first?.vehicle.maximumCapacity == 1)
        let second = try await store.vehicles(provider: "p", afterID: first.last?.id, limit: 10)
        #expect(second.map(\.id) == ["v3", "v4", "v5"])
    }
}

@Suite("SQLite store migrations", .temporaryResources)
struct SQLiteFleetStoreMigrationTests {
    @Test("a database of the first schema (REST JSON bodies) is read after migrating to protobuf bodies")
    func jsonToProtobuf() async throws {
        let path = try FleetStoreDriver.temporaryPath()
        do {
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                        INSERT INTO grdb_migrations VALUES ('v1: vehicles and trips');
                        CREATE TABLE vehicles (
                            provider TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
                            PRIMARY KEY (provider, id)) WITHOUT ROWID;
                        CREATE TABLE trips (
                            provider TEXT NOT NULL, id TEXT NOT NULL, vehicle_id TEXT, active INTEGER NOT NULL,
                            body TEXT NOT NULL, PRIMARY KEY (provider, id)) WITHOUT ROWID;
                        CREATE INDEX trips_by_vehicle ON trips (provider, vehicle_id, active);
                        """
                )
                try db.execute(
                    sql: "INSERT INTO vehicles VALUES ('p', 'v1', ?)",
                    arguments: [
                        #"{"vehicleState":"ONLINE","maximumCapacity":4,"availableCapacity":4,"lastLocation":{"location":{"latitude":37.5,"longitude":-122.1},"serverTime":"2026-11-20T10:00:00.000Z"}}"#
                    ]
                )
                try db.execute(
                    sql: "INSERT INTO trips VALUES ('p', 't1', 'v1', 1, ?)",
                    arguments: [#"{"tripStatus":"NEW","vehicleId":"v1","tripType":"EXCLUSIVE"}"#]
                )
            }
        }
        let store = try SQLiteFleetStore(path: path)
        let vehicle = try #require(try await store.vehicle(provider: "p", id: "v1"))
        #expect(vehicle.vehicleState == .online && vehicle.maximumCapacity == 4)
        #expect(vehicle.lastLocation.location.latitude == 37.5)
        #expect(vehicle.lastLocation.serverTime == Google_Protobuf_Timestamp(seconds: 1_795_168_800))
        let trip = try #require(try await store.trip(provider: "p", id: "t1"))
        #expect(trip.vehicleID == "v1" && trip.isActive && trip.trip.tripType == .exclusive)
        // The vehicle's indexed columns, location and attributes were filled in by the migration.
        var query = VehicleQuery()
        query.state = .online
        query.minimumCapacity = 4
        query.area = VehicleQuery.Box.around(latitude: 37.5, longitude: -122.1, meters: 500)
        query.onTripOnly = true
        let found = try await store.vehicles(provider: "p", matching: query, after: nil, limit: 10, counting: true)
        #expect(found.vehicles.map(\.id) == ["v1"] && found.totalCount == 1)
        #expect(found.vehicles.first?.activeTrips.map(\.id) == ["t1"])
    }
}

@Suite("PostgreSQL store settings", .temporaryResources, .enabled(if: PostgresTestServer.url != nil))
struct PostgresFleetStoreSettingsTests {
    @Test("the emulator's connections commit without waiting for the WAL flush; other pools keep the server's default")
    func synchronousCommit() async throws {
        let resources = try TestResources.required()
        let url = try await resources.freshDatabase()
        let store = try await PostgresFleetStore.connect(url, maximumConnections: 2, in: resources.pools)
        let show = PostgresQuery(unsafeSQL: "SHOW synchronous_commit")
        let emulator = try await store.database.query(show).map { try $0.decode(String.self) }
        #expect(emulator == ["off"])
        let other = try await resources.pools.connect(url, migrations: nil, maximumConnections: 1)
        let plain = try await other.query(show).map { try $0.decode(String.self) }
        #expect(plain == ["on"])
    }
}
