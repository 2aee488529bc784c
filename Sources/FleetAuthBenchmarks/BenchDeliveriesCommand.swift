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
    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "deliveries",
            abstract: "The Deliveries API's hot path: UpdateDeliveryVehicle with a location, ListTasks with a filter.",
            discussion: """
                Run it from a release build: swift run -c release fleetauth bench deliveries. It stores --tasks \
                tasks (a third in zone north, one in four closed) and 100 delivery vehicles, and as many on-demand \
                vehicles for the references, then times one call at a time through the emulator's services (their \
                authorization, validation, store and rendering; no HTTP): UpdateDeliveryVehicle with a new last \
                location against UpdateVehicle with one, and ListTasks pages of 50 filtered by state = OPEN AND \
                attributes.zone = "north" and by state = OPEN (totalSize included) against a ListVehicles page of \
                50 filtered by an attribute. Each figure is printed with its ratio to its on-demand reference in the same run. With \
                --database it does the same on PostgreSQL.
                """
        )

        @Option(help: "Tasks (and on-demand vehicles) stored.") var tasks: Int = 10_000
        @Option(help: "Calls timed per query.") var calls: Int = 300
        @Option(
            help:
                "Also measure PostgreSQL (postgres://…); the run replaces provider bench-deliveries there, then deletes it."
        )
        var database: String?

        static let provider = "bench-deliveries"

        func validate() throws {
            guard calls > 0, tasks >= 100 else { throw ValidationError("--calls must be positive and --tasks ≥ 100.") }
        }

        func run() async throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("fleetauth-bench-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let accounts = try DefaultProvisioning.provision(dataDirectory: directory, project: Self.provider)
            guard let server = accounts.first(where: { $0.role == .serviceSuperUser }),
                let delivery = accounts.first(where: { $0.role == .deliverySuperUser })
            else { throw BenchmarkFailure("The server service accounts were not provisioned.") }
            let trust = try TrustConfiguration(contentsOf: directory + "/" + DefaultProvisioning.trustFileName)
            let tokens = (
                server: try FleetEngineTokenMinter(signer: LocalKeySigner(key: server.key)).mintSynchronously(.server)
                    .jwt,
                delivery: try FleetEngineTokenMinter(signer: LocalKeySigner(key: delivery.key))
                    .mintSynchronously(.deliveryServer).jwt
            )
            say("fleetauth bench deliveries: one call at a time, through the emulator's services (no HTTP); ms")
            say("| store | call | p50 / p99 | calls/s | on-demand reference p50 / p99 | ratio (p50) |")
            say("|---|---|---:|---:|---:|---:|")
            try await measure(
                try SQLiteFleetStore(path: directory + "/deliveries.sqlite"),
                name: "SQLite",
                trust: trust,
                tokens: tokens
            )
            if let database {
                let url: PostgresURL
                do { url = try PostgresURL(database) } catch { throw BenchmarkFailure("\(error)") }
                try await PostgresFleetStore.withConnected(url) { store in
                    try await store.deleteAll(provider: Self.provider)
                    try await measure(store, name: "PostgreSQL", trust: trust, tokens: tokens)
                    // A later benchmark on the same database would measure against these rows' indexes.
                    try await store.deleteAll(provider: Self.provider)
                }
            }
            say("(ratio: the on-demand reference's p50 ÷ the delivery call's p50, in this run: above 1 is faster)")
        }

        func measure(
            _ store: some EmulatorStore,
            name: String,
            trust: TrustConfiguration,
            tokens: (server: String, delivery: String)
        ) async throws {
            let emulator = try await EmulatorServer(trust: trust, store: store)
            let deliveries = emulator.deliveries
            let backend = try emulator.authenticator.authenticate(authorization: "Bearer \(tokens.server)")
            let dispatcher = try emulator.authenticator.authenticate(authorization: "Bearer \(tokens.delivery)")
            let parent = "providers/\(Self.provider)"
            var random = BenchRandom(state: 0xDE11)
            // The fleet: tasks in batches, 100 delivery vehicles, and as many on-demand vehicles as tasks.
            var batch: [StoredTask] = []
            for index in 0..<tasks {
                var task = FleetEngineDelivery.Task()
                task.type = .delivery
                task.state = index % 4 == 3 ? .closed : .open
                task.trackingID = "parcel-\(index)"
                task.plannedLocation.point = BenchCommand.Scale.point(random: &random)
                task.taskDuration = Google_Protobuf_Duration(seconds: 120)
                task.attributes = [
                    .with {
                        $0.key = "zone"; $0.stringValue = index % 3 == 0 ? "north" : "south"
                    }
                ]
                batch.append(StoredTask(id: String(format: "t%06d", index), task: task))
                if batch.count == 500 {
                    try await store.insertTasks(batch, provider: Self.provider)
                    batch = []
                }
            }
            if !batch.isEmpty { try await store.insertTasks(batch, provider: Self.provider) }
            for index in 0..<100 {
                try await store.insertDeliveryVehicle(
                    .init(),
                    provider: Self.provider,
                    id: String(format: "dv%03d", index)
                )
            }
            let now = Date()
            for index in 0..<tasks {
                try await store.insertVehicle(
                    BenchCommand.Scale.vehicle(index, now: now, random: &random),
                    provider: Self.provider,
                    id: String(format: "v%06d", index)
                )
            }
            if let postgres = store as? PostgresFleetStore { try await postgres.vacuum() }

            var timings: [String: [Double]] = [:]
            let clock = ContinuousClock()
            func time(_ key: String, _ body: () async throws -> Void) async rethrows {
                let start = clock.now
                try await body()
                timings[key, default: []].append((clock.now - start).milliseconds)
            }
            var listTasks = FleetEngineDelivery.ListTasksRequest()
            listTasks.parent = parent
            listTasks.pageSize = 50
            listTasks.filter = #"state = OPEN AND attributes.zone = "north""#
            var listOpenTasks = listTasks
            listOpenTasks.filter = "state = OPEN"
            var listVehicles = FleetEngineV1.ListVehiclesRequest()
            listVehicles.parent = parent
            listVehicles.vehicleTypeCategories = [.auto]
            listVehicles.pageSize = 50
            listVehicles.filter = #"attributes.tier = "premium""#
            var matched: Int64 = 0
            for _ in 0..<calls {
                var location = FleetEngineDelivery.DeliveryVehicleLocation()
                location.location = BenchCommand.Scale.point(random: &random)
                var update = FleetEngineDelivery.UpdateDeliveryVehicleRequest()
                update.deliveryVehicle.name =
                    "\(parent)/deliveryVehicles/" + String(format: "dv%03d", Int.random(in: 0..<100, using: &random))
                update.deliveryVehicle.lastLocation = location
                update.updateMask.paths = ["last_location"]
                try await time("update") { _ = try await deliveries.updateDeliveryVehicle(update, caller: dispatcher) }
                var vehicleUpdate = FleetEngineV1.UpdateVehicleRequest()
                vehicleUpdate.name =
                    "\(parent)/vehicles/" + String(format: "v%06d", Int.random(in: 0..<tasks, using: &random))
                vehicleUpdate.vehicle.lastLocation.location = location.location
                vehicleUpdate.updateMask.paths = ["last_location"]
                try await time("update reference") {
                    _ = try await emulator.service.updateVehicle(vehicleUpdate, caller: backend)
                }
                try await time("list") {
                    matched = try await deliveries.listTasks(listTasks, caller: dispatcher).totalSize
                }
                try await time("list reference") {
                    _ = try await emulator.service.listVehicles(listVehicles, caller: backend)
                }
                try await time("list open") { _ = try await deliveries.listTasks(listOpenTasks, caller: dispatcher) }
            }
            if matched == 0 { throw BenchmarkFailure("The ListTasks filter matched no task.") }
            func row(_ call: String, _ key: String, reference: String? = nil) {
                let (values, reference) = (timings[key] ?? [], timings[reference ?? key + " reference"] ?? [])
                let p50 = Scale.percentile(values, 0.5)
                let total = values.reduce(0, +)
                say(
                    String(
                        format: "| %@ | %@ | %.2f / %.2f | %.0f | %.2f / %.2f | %.2f |",
                        name,
                        call,
                        p50,
                        Scale.percentile(values, 0.99),
                        Double(values.count) / max(total / 1_000, 0.000_001),
                        Scale.percentile(reference, 0.5),
                        Scale.percentile(reference, 0.99),
                        Scale.percentile(reference, 0.5) / max(p50, 0.000_001)
                    )
                )
            }
            row("UpdateDeliveryVehicle (location)", "update")
            row("ListTasks, filter, among \(tasks.formatted())", "list")
            row("ListTasks, state = OPEN, among \(tasks.formatted())", "list open", reference: "list reference")
        }
    }
}
