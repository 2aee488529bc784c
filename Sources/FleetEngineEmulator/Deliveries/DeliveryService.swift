package import FleetAuthCore
import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// Fleet Engine's Deliveries API (`maps.fleetengine.delivery.v1.DeliveryService`), implemented once for both
/// transports, as ``OnDemandService`` is for trips: the REST routes and the gRPC service turn their requests into
/// request messages, authenticate the caller into a ``Principal`` and call the method of the same name here. Each
/// method authorizes the call before it reads or writes anything the caller may not see (<doc:Deliveries>),
/// validates the request, and answers with the response message; failures are `GoogleAPIError`s and the store's
/// `StoreError`s.
public struct DeliveryService: Sendable {
    let store: any DeliveryStore
    let clock: any WallClock
    /// Metres per second, for ETAs where Fleet Engine would use a road network.
    let speed: Double

    /// - Parameters:
    ///   - store: where delivery vehicles and tasks live.
    ///   - clock: the time of server-set times and ETAs.
    ///   - speed: the stand-in speed of every vehicle, in metres per second (default 10, 36 km/h).
    package init(store: any DeliveryStore, clock: any WallClock = .system, speed: Double = 10) {
        self.store = store
        self.clock = clock
        self.speed = speed
    }

    var now: Date { clock.currentDate }

    // MARK: Names

    static func deliveryVehicleName(provider: String, id: String) -> String {
        "providers/\(provider)/deliveryVehicles/\(id)"
    }

    static func taskName(provider: String, id: String) -> String { "providers/\(provider)/tasks/\(id)" }
}
