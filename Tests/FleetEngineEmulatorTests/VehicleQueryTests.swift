import FleetAuthCore
import FleetAuthServerTesting
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import SwiftProtobuf
import Testing

/// A reproducible random source, so a failing fleet can be built again from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random fleets and random queries: what each store answers from its indexes must equal what a scan of every
/// vehicle answers, before and after the fleet moves, changes and shrinks.
@Suite("Vehicle queries: indexes answer as a scan does", .temporaryResources)
struct VehicleQueryTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// Two places: a city, and the 180th meridian on the equator (boxes that wrap).
    static let centres: [(Double, Double)] = [(37.77, -122.42), (0.0, 179.995)]
    static let keys = ["tier", "seats", "pet"]
    static let values = ["a", "b", "true", "6"]

    static func randomVehicle(_ random: inout SplitMix64) -> FleetEngineV1.Vehicle {
        var vehicle = FleetEngineV1.Vehicle()
        vehicle.vehicleState = [.online, .offline, .unknownVehicleState].randomElement(using: &random)!
        vehicle.vehicleType.category = [.auto, .taxi, .truck, .twoWheeler].randomElement(using: &random)!
        vehicle.maximumCapacity = Int32.random(in: 0...6, using: &random)
        vehicle.supportedTripTypes = [FleetEngineV1.TripType.shared, .exclusive].filter { _ in
            Bool.random(using: &random)
        }
        if Int.random(in: 0..<10, using: &random) > 0 {
            let (latitude, longitude) = centres.randomElement(using: &random)!
            var location = FleetEngineV1.VehicleLocation()
            if Int.random(in: 0..<10, using: &random) > 0 {
                location.location.latitude = latitude + Double.random(in: -0.05...0.05, using: &random)
                var lng = longitude + Double.random(in: -0.05...0.05, using: &random)
                if lng > 180 { lng -= 360 }
                location.location.longitude = lng
            }
            let seen = now.addingTimeInterval(-Double.random(in: 0...900, using: &random))
            switch Int.random(in: 0..<4, using: &random) {
            case 0: location.serverTime = Google_Protobuf_Timestamp(date: seen)
            case 1: location.updateTime = Google_Protobuf_Timestamp(date: seen)
            case 2:
                location.serverTime = Google_Protobuf_Timestamp(date: seen)
                location.updateTime = Google_Protobuf_Timestamp(date: seen.addingTimeInterval(-30))
            default: break
            }
            vehicle.lastLocation = location
        }
        for key in keys where Bool.random(using: &random) {
            var attribute = FleetEngineV1.VehicleAttribute()
            attribute.key = key
            attribute.value = values.randomElement(using: &random)!
            attribute.stringValue = attribute.value
            vehicle.attributes.append(attribute)
        }
        return vehicle
    }

    static func randomCondition(_ random: inout SplitMix64, depth: Int = 0) -> AttributeCondition {
        let leaf = AttributeCondition.equals(
            key: keys.randomElement(using: &random)!,
            value: values.randomElement(using: &random)!
        )
        guard depth < 3 else { return leaf }
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            return .all(
                (0..<Int.random(in: 0...3, using: &random)).map { _ in randomCondition(&random, depth: depth + 1) }
            )
        case 1:
            return .any(
                (0..<Int.random(in: 0...3, using: &random)).map { _ in randomCondition(&random, depth: depth + 1) }
            )
        case 2: return .not(randomCondition(&random, depth: depth + 1))
        default: return leaf
        }
    }

    static func randomQuery(_ random: inout SplitMix64) -> VehicleQuery {
        var query = VehicleQuery()
        switch Int.random(in: 0..<12, using: &random) {
        case 0, 1:
            // One attribute's value and nothing else (stores count these from the attribute index).
            let leaf = AttributeCondition.equals(
                key: keys.randomElement(using: &random)!,
                value: values.randomElement(using: &random)!
            )
            query.attributes = Bool.random(using: &random) ? leaf : .all([leaf])
            return query
        case 2:
            // One state, or nothing (stores keep these counts).
            query.state = [.online, .offline, nil].randomElement(using: &random)!
            return query
        default: break
        }
        if Bool.random(using: &random) { query.state = [.online, .offline].randomElement(using: &random)! }
        if Int.random(in: 0..<3, using: &random) == 0 {
            query.categories = Set([.auto, .taxi, .truck].filter { _ in Bool.random(using: &random) })
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            query.tripTypes = Set([.shared, .exclusive].filter { _ in Bool.random(using: &random) })
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            query.minimumCapacity = Int32.random(in: 0...5, using: &random)
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            query.freshSince = now.addingTimeInterval(-Double.random(in: 0...900, using: &random))
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            let (latitude, longitude) = centres.randomElement(using: &random)!
            query.area = VehicleQuery.Box.around(
                latitude: latitude + Double.random(in: -0.03...0.03, using: &random),
                longitude: longitude,
                meters: Double.random(in: 400...10_000, using: &random)
            )
        case 1:
            let (latitude, longitude) = centres.randomElement(using: &random)!
            var viewport = FleetEngineV1.Viewport()
            viewport.low.latitude = latitude - Double.random(in: 0...0.04, using: &random)
            viewport.high.latitude = latitude + Double.random(in: 0...0.04, using: &random)
            viewport.low.longitude = longitude - Double.random(in: 0...0.04, using: &random)
            var east = longitude + Double.random(in: 0...0.04, using: &random)
            if east > 180 { east -= 360 }
            viewport.high.longitude = east
            query.area = VehicleQuery.Box.covering(viewport)
        default: break
        }
        query.onTripOnly = Int.random(in: 0..<4, using: &random) == 0
        if Int.random(in: 0..<5, using: &random) == 0 {
            query.ids = Set(
                (0..<Int.random(in: 0...20, using: &random)).map { _ in
                    String(format: "v%03d", Int.random(in: 0..<300, using: &random))
                }
            )
        }
        if Bool.random(using: &random) { query.attributes = randomCondition(&random) }
        return query
    }

    static func compare(_ store: any OnDemandStore, _ random: inout SplitMix64, queries: Int) async throws {
        var answered = 0
        var narrowed = 0
        defer {
            // Most queries find something, and most leave something out: the comparison is not between empties.
            #expect(answered > queries / 3 && narrowed > queries / 3, "\(answered) answered, \(narrowed) narrowed")
        }
        // The scan's answer, computed from one read of the whole fleet (the default reads every vehicle, as this
        // does, for each query).
        var fleets: [String: [MatchedVehicle]] = [:]
        for provider in ["p", "q"] {
            fleets[provider] = try await store.scanVehicles(
                provider: provider,
                matching: VehicleQuery(),
                after: nil,
                limit: nil,
                counting: false
            ).vehicles
        }
        for round in 0..<queries {
            let query = randomQuery(&random)
            let afterID =
                Bool.random(using: &random) ? String(format: "v%03d", Int.random(in: 0..<300, using: &random)) : nil
            let limit = Bool.random(using: &random) ? Int.random(in: 1...60, using: &random) : nil
            let counting = Bool.random(using: &random)
            for provider in ["p", "q"] {
                let indexed = try await store.vehicles(
                    provider: provider,
                    matching: query,
                    after: afterID,
                    limit: limit,
                    counting: counting
                )
                let matches = fleets[provider, default: []].filter {
                    query.accepts($0.vehicle, id: $0.id, activeTrips: $0.activeTrips)
                }
                let page = matches.filter { match in afterID.map { match.id > $0 } ?? true }
                let scanned = VehicleQueryResult(
                    vehicles: limit.map { Array(page.prefix($0)) } ?? page,
                    totalCount: counting ? matches.count : nil
                )
                if round < 10 {
                    // The default implementation itself, as a store without indexes would answer.
                    let direct = try await store.scanVehicles(
                        provider: provider,
                        matching: query,
                        after: afterID,
                        limit: limit,
                        counting: counting
                    )
                    #expect(direct == scanned)
                }
                let positions = try await store.vehiclePositions(provider: provider, matching: query)
                let expected = matches.filter { $0.vehicle.lastLocation.hasLocation }.map {
                    VehiclePosition(
                        id: $0.id,
                        latitude: $0.vehicle.lastLocation.location.latitude,
                        longitude: $0.vehicle.lastLocation.location.longitude
                    )
                }
                #expect(Set(positions) == Set(expected) && positions.count == expected.count, "\(query)")
                if provider == "p" {
                    if !indexed.vehicles.isEmpty { answered += 1 }
                    if (indexed.totalCount ?? indexed.vehicles.count) < 200 { narrowed += 1 }
                }
                #expect(
                    indexed == scanned,
                    "\(query), after \(afterID ?? "nil"), limit \(limit.map(String.init) ?? "nil")"
                )
                if indexed != scanned { return }
            }
        }
    }

    @Test("random queries on random fleets: the indexed answer equals the scan's", arguments: FleetStoreDriver.all)
    func randomFleets(_ driver: FleetStoreDriver) async throws {
        let store = try await driver.open().store
        var random = SplitMix64(state: 0x5EED_F1EE7)
        for index in 0..<300 {
            let provider = index % 10 == 9 ? "q" : "p"
            try await store.insertVehicle(
                Self.randomVehicle(&random),
                provider: provider,
                id: String(format: "v%03d", index)
            )
        }
        for index in 0..<60 {
            let vehicle = Int.random(in: 0..<300, using: &random)
            guard vehicle % 10 != 9 else { continue }
            var trip = FleetEngineV1.Trip()
            trip.vehicleID = String(format: "v%03d", vehicle)
            trip.tripStatus = Bool.random(using: &random) ? .enrouteToPickup : .complete
            try await store.insertTrip(StoredTrip(id: "t\(index)", trip: trip, updatedAt: Self.now), provider: "p")
        }
        // The random fleet must exercise every condition: some vehicles pass each and some fail it.
        let all = try await store.scanVehicles(
            provider: "p",
            matching: VehicleQuery(),
            after: nil,
            limit: nil,
            counting: true
        )
        #expect(all.totalCount == 270)
        #expect(all.vehicles.contains { !$0.activeTrips.isEmpty })
        try await Self.compare(store, &random, queries: 60)

        // Moves, new attributes, deletions: the indexes follow every write.
        for _ in 0..<100 {
            let index = Int.random(in: 0..<300, using: &random)
            let provider = index % 10 == 9 ? "q" : "p"
            let replacement = Self.randomVehicle(&random)
            _ = try await store.updateVehicle(provider: provider, id: String(format: "v%03d", index)) { _, _ in
                replacement
            }
        }
        // New locations alone (what most updates are; PostgreSQL writes them with a statement of their own).
        for _ in 0..<100 {
            let index = Int.random(in: 0..<300, using: &random)
            let provider = index % 10 == 9 ? "q" : "p"
            let moved = Self.randomVehicle(&random).lastLocation
            _ = try? await store.updateVehicle(provider: provider, id: String(format: "v%03d", index)) { vehicle, _ in
                var next = vehicle
                next.lastLocation = moved
                return next
            }
        }
        try await Self.compare(store, &random, queries: 30)
        for index in stride(from: 1, to: 300, by: 7) {
            let provider = index % 10 == 9 ? "q" : "p"
            try? await store.deleteVehicle(provider: provider, id: String(format: "v%03d", index))
        }
        try await Self.compare(store, &random, queries: 60)
    }

    @Test("a search box holds every point within its radius, across the 180th meridian and near the poles")
    func searchBoxes() {
        var random = SplitMix64(state: 42)
        for _ in 0..<2_000 {
            let latitude = Double.random(in: -89.9...89.9, using: &random)
            let longitude = Double.random(in: -180...180, using: &random)
            let meters = Double.random(in: 400...10_000, using: &random)
            let boxes = VehicleQuery.Box.around(latitude: latitude, longitude: longitude, meters: meters)
            // Points on the circle (and just inside it) in every direction.
            for step in 0..<36 {
                let bearing = Double(step) * 10 * .pi / 180
                let angle = meters * 0.9999 / 6_371_008.8
                let φ1 = latitude * .pi / 180
                let φ2 = asin(sin(φ1) * cos(angle) + cos(φ1) * sin(angle) * cos(bearing))
                let λ2 =
                    longitude * .pi / 180
                    + atan2(sin(bearing) * sin(angle) * cos(φ1), cos(angle) - sin(φ1) * sin(φ2))
                var pointLongitude = λ2 * 180 / .pi
                if pointLongitude > 180 { pointLongitude -= 360 }
                if pointLongitude < -180 { pointLongitude += 360 }
                let pointLatitude = φ2 * 180 / .pi
                #expect(
                    boxes.contains { $0.contains(latitude: pointLatitude, longitude: pointLongitude) },
                    "(\(pointLatitude), \(pointLongitude)) is \(meters) m from (\(latitude), \(longitude))"
                )
            }
        }
    }

    @Test(
        "a search reads the nearest vehicles first and stops early, yet ranks exactly as reading all of them",
        arguments: [
            FleetEngineV1.SearchVehiclesRequest.VehicleMatchOrder.pickupPointEta, .pickupPointDistance,
            .dropoffPointEta, .pickupPointStraightDistance,
        ]
    )
    func searchRanking(_ order: FleetEngineV1.SearchVehiclesRequest.VehicleMatchOrder) async throws {
        let store = try SQLiteFleetStore(inMemory: ())
        let service = OnDemandService(store: store)
        let caller = try TokenAuthenticator(accounts: EmulatorFixture.accounts)
            .authenticate(authorization: "Bearer \(EmulatorFixture.server)")
        var random = SplitMix64(state: UInt64(order.rawValue) + 7)
        let pickup = (latitude: 37.0, longitude: -122.0)
        func point(_ spread: Double) -> FleetEngineV1.TerminalLocation {
            var location = FleetEngineV1.TerminalLocation()
            location.point.latitude = pickup.latitude + Double.random(in: -spread...spread, using: &random)
            location.point.longitude = pickup.longitude + Double.random(in: -spread...spread, using: &random)
            return location
        }
        for index in 0..<40 {
            var vehicle = FleetEngineV1.Vehicle()
            vehicle.vehicleState = .online
            vehicle.vehicleType.category = .auto
            vehicle.maximumCapacity = 4
            vehicle.supportedTripTypes = [.shared, .exclusive]
            vehicle.backToBackEnabled = true
            vehicle.lastLocation.location = point(0.04).point
            vehicle.lastLocation.serverTime = Google_Protobuf_Timestamp(date: Date())
            let id = String(format: "v%02d", index)
            try await store.insertVehicle(vehicle, provider: EmulatorFixture.project, id: id)
            // Half the fleet is on a trip, whose remaining stops lengthen its route to the pickup point.
            if index % 2 == 0 {
                var trip = FleetEngineV1.Trip()
                trip.vehicleID = id
                trip.tripStatus = .enrouteToDropoff
                trip.tripType = .shared
                trip.numberOfPassengers = 1
                trip.pickupPoint = point(0.05)
                trip.dropoffPoint = point(0.08)
                try await store.insertTrip(
                    StoredTrip(id: "t\(index)", trip: trip, updatedAt: Date()),
                    provider: EmulatorFixture.project
                )
            }
        }
        var request = FleetEngineV1.SearchVehiclesRequest()
        request.parent = "providers/\(EmulatorFixture.project)"
        request.pickupPoint.point.latitude = pickup.latitude
        request.pickupPoint.point.longitude = pickup.longitude
        request.dropoffPoint = point(0.05)
        request.pickupRadiusMeters = 10_000
        request.minimumCapacity = 1
        // Exclusive: a vehicle on a trip drives its remaining stops first, so ranks differ from straight lines.
        request.tripTypes = [.exclusive]
        request.vehicleTypes = [FleetEngineV1.Vehicle.VehicleType.with { $0.category = .auto }]
        request.orderBy = order
        request.currentTripsPresent = .any
        // At most 40 candidates: 50 reads every one of them.
        request.count = 50
        let all = try await service.searchVehicles(request, caller: caller).matches.map(\.vehicle.name)
        #expect(all.count > 30)
        for count in [1, 3, 7, 20] {
            request.count = Int32(count)
            let first = try await service.searchVehicles(request, caller: caller).matches.map(\.vehicle.name)
            #expect(first == Array(all.prefix(count)), "count \(count)")
        }
    }
}
