import ArgumentParser
import FleetAuthCore
import FleetAuthDatabase
import FleetAuthJWT
import FleetAuthServerCore
import FleetEngineAPI
import FleetEngineEmulator
import Foundation
import SwiftProtobuf

extension BenchCommand {
    struct Scale: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scale",
            abstract: "SearchVehicles and ListVehicles latency among 1,000, 10,000 and 100,000 vehicles.",
            discussion: """
                Run it from a release build: swift run -c release fleetauth bench scale. For each fleet size it \
                stores that many vehicles spread over a 40 × 40 km city (one in eight offline, a third with \
                attributes tier=premium, one in ten stale), then times, one call at a time through the emulator's \
                service (its authorization, validation, store query and rendering; no HTTP), SearchVehicles for \
                10 matches within 2 km of random pickup points, and ListVehicles pages of 50 with the filter \
                attributes.tier = "premium" and with vehicleState ONLINE (totalSize included). It prints the p50 \
                and p99 of each and their growth from the smallest fleet: an index keeps the growth near 1, a \
                scan makes it follow the fleet. With --database it does the same on PostgreSQL, vacuumed and analyzed after \
                each load as autovacuum would be.
                """
        )

        @Option(help: "Fleet sizes, comma-separated.") var sizes: String = "1000,10000,100000"
        @Option(help: "Calls timed per query and size.") var calls: Int = 200
        @Option(
            help: """
                Also measure PostgreSQL (postgres://USER[:PASSWORD]@HOST[:PORT]/DB); the run replaces the vehicles \
                of provider bench-scale there, and deletes them when it ends.
                """
        )
        var database: String?

        static let provider = "bench-scale"
        static let centre = (latitude: 37.77, longitude: -122.42)

        func validate() throws {
            guard calls > 0, !fleetSizes.isEmpty, fleetSizes.allSatisfy({ $0 > 0 }) else {
                throw ValidationError("--calls must be positive and --sizes a list of positive fleet sizes.")
            }
        }

        var fleetSizes: [Int] {
            sizes.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }

        func run() async throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("fleetauth-bench-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let accounts = try DefaultProvisioning.provision(dataDirectory: directory, project: Self.provider)
            guard let server = accounts.first(where: { $0.role == .serviceSuperUser }) else {
                throw BenchmarkFailure("No server service account was provisioned.")
            }
            let trust = try TrustConfiguration(contentsOf: directory + "/" + DefaultProvisioning.trustFileName)
            let token = try FleetEngineTokenMinter(signer: LocalKeySigner(key: server.key))
                .mintSynchronously(.server).jwt
            say("fleetauth bench scale: one call at a time, through the emulator's service (no HTTP); latency in ms")
            say(
                "| store | vehicles | SearchVehicles p50 / p99 | ListVehicles filter p50 / p99 | ListVehicles state p50 / p99 |"
            )
            say("|---|---:|---:|---:|---:|")
            var baseline: [String: [Double]] = [:]
            for size in fleetSizes {
                let store = try SQLiteFleetStore(path: directory + "/scale-\(size).sqlite")
                try await measure(store, name: "SQLite", size: size, trust: trust, token: token, baseline: &baseline)
            }
            if let database {
                let url: PostgresURL
                do { url = try PostgresURL(database) } catch { throw BenchmarkFailure("\(error)") }
                try await PostgresFleetStore.withConnected(url) { store in
                    try await store.deleteAll(provider: Self.provider)
                    for size in fleetSizes {
                        try await measure(
                            store,
                            name: "PostgreSQL",
                            size: size,
                            trust: trust,
                            token: token,
                            baseline: &baseline
                        )
                    }
                    // A later benchmark on the same database would measure against these rows' indexes.
                    try await store.deleteAll(provider: Self.provider)
                }
            }
            say(
                "(×n: the figure ÷ the same figure at \(fleetSizes.first ?? 0) vehicles on the same store, in this run)"
            )
        }

        /// Fills the store to `size` vehicles (keeping those already there), then times each query.
        func measure(
            _ store: any EmulatorStore,
            name: String,
            size: Int,
            trust: TrustConfiguration,
            token: String,
            baseline: inout [String: [Double]]
        ) async throws {
            let emulator = try await EmulatorServer(trust: trust, store: store)
            let caller = try emulator.authenticator.authenticate(authorization: "Bearer \(token)")
            let service = emulator.service
            var random = BenchRandom(state: 0xF1EE7)
            let existing =
                try await store.vehicles(
                    provider: Self.provider,
                    matching: VehicleQuery(),
                    after: nil,
                    limit: 0,
                    counting: true
                ).totalCount ?? 0
            if existing > size {
                throw BenchmarkFailure("\(name) holds \(existing) vehicles of \(Self.provider); clear it first.")
            }
            let now = Date()
            for index in existing..<size {
                try await store.insertVehicle(
                    Self.vehicle(index, now: now, random: &random),
                    provider: Self.provider,
                    id: String(format: "v%06d", index)
                )
            }
            // Steady state after a bulk load: PostgreSQL's autovacuum would have run (SQLite needs nothing).
            if let postgres = store as? PostgresFleetStore { try await postgres.vacuum() }
            var search = FleetEngineV1.SearchVehiclesRequest()
            search.parent = "providers/\(Self.provider)"
            search.pickupRadiusMeters = 2_000
            search.count = 10
            search.minimumCapacity = 1
            search.tripTypes = [.exclusive]
            search.vehicleTypes = [FleetEngineV1.Vehicle.VehicleType.with { $0.category = .auto }]
            search.orderBy = .pickupPointStraightDistance
            var byFilter = FleetEngineV1.ListVehiclesRequest()
            byFilter.parent = search.parent
            byFilter.vehicleTypeCategories = [.auto]
            byFilter.pageSize = 50
            byFilter.filter = #"attributes.tier = "premium""#
            var byState = FleetEngineV1.ListVehiclesRequest()
            byState.parent = search.parent
            byState.vehicleTypeCategories = [.auto]
            byState.pageSize = 50
            byState.vehicleState = .online

            var searchTimes: [Double] = []
            var filterTimes: [Double] = []
            var stateTimes: [Double] = []
            var found = 0
            let clock = ContinuousClock()
            for call in 0..<calls {
                search.pickupPoint.point = Self.point(random: &random)
                var start = clock.now
                found += try await service.searchVehicles(search, caller: caller).matches.count
                searchTimes.append((clock.now - start).milliseconds)
                // Pages from the first, and pages deep in the list (keyset tokens).
                byFilter.pageToken = ""
                byState.pageToken = ""
                if call % 2 == 1 {
                    let after = String(format: "v%06d", Int.random(in: 0..<size, using: &random))
                    byFilter.pageToken = Base64URL.encode(Array(after.utf8))
                    byState.pageToken = byFilter.pageToken
                }
                start = clock.now
                let page = try await service.listVehicles(byFilter, caller: caller)
                filterTimes.append((clock.now - start).milliseconds)
                start = clock.now
                _ = try await service.listVehicles(byState, caller: caller)
                stateTimes.append((clock.now - start).milliseconds)
                if call == 0, page.totalSize == 0 { throw BenchmarkFailure("The filter matched no vehicle.") }
            }
            if found == 0 { throw BenchmarkFailure("SearchVehicles found no vehicle among \(size).") }
            let figures = [searchTimes, filterTimes, stateTimes].flatMap {
                [Self.percentile($0, 0.5), Self.percentile($0, 0.99)]
            }
            let key = name
            if baseline[key] == nil { baseline[key] = figures }
            let growth = zip(figures, baseline[key]!).map { $0 / max($1, 0.001) }
            func cell(_ at: Int) -> String {
                String(format: "%.2f / %.2f (×%.1f / ×%.1f)", figures[at], figures[at + 1], growth[at], growth[at + 1])
            }
            say("| \(name) | \(size.formatted()) | \(cell(0)) | \(cell(2)) | \(cell(4)) |")
        }

        static func point(random: inout BenchRandom) -> FleetEngineV1.LatLng {
            // 40 × 40 km around the centre.
            FleetEngineV1.LatLng.with {
                $0.latitude = centre.latitude + Double.random(in: -0.18...0.18, using: &random)
                $0.longitude = centre.longitude + Double.random(in: -0.23...0.23, using: &random)
            }
        }

        static func vehicle(_ index: Int, now: Date, random: inout BenchRandom) -> FleetEngineV1.Vehicle {
            var vehicle = FleetEngineV1.Vehicle()
            vehicle.vehicleState = index % 8 == 7 ? .offline : .online
            vehicle.vehicleType.category = .auto
            vehicle.maximumCapacity = 4
            vehicle.supportedTripTypes = [.exclusive, .shared]
            vehicle.lastLocation.location = point(random: &random)
            vehicle.lastLocation.serverTime = Google_Protobuf_Timestamp(
                date: now.addingTimeInterval(index % 10 == 9 ? -3_600 : -Double(index % 60))
            )
            if index % 3 == 0 {
                vehicle.attributes = [
                    FleetEngineV1.VehicleAttribute.with {
                        $0.key = "tier"
                        $0.value = "premium"
                        $0.stringValue = "premium"
                    }
                ]
            }
            return vehicle
        }

        static func percentile(_ values: [Double], _ fraction: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
        }
    }
}

/// A reproducible random source for benchmark fleets.
struct BenchRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}
