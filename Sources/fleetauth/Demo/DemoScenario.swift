import FleetAuthClient
import FleetAuthCore
import Foundation

/// What the demo sets up: vehicles on a circle around San Francisco, each with its share of the trips, as legs
/// sized so that every trip finishes in about 70 % of the simulated run.
struct DemoScenario: Sendable {
    /// One trip: picked up and dropped off one leg apart.
    struct Trip: Sendable, Hashable {
        var id: String
        var pickup: Coordinate
        var dropoff: Coordinate
    }

    /// One vehicle, where it starts, and the trips it drives in order.
    struct Vehicle: Sendable, Hashable {
        var id: String
        var start: Coordinate
        var trips: [Trip]
    }

    /// Tokens live 15 minutes, so with the provider's 10-minute refresh margin each context refreshes every 5
    /// simulated minutes: a few times per run.
    static let tokenLifetime: Int64 = 900
    static let center = Coordinate(latitude: 37.7749, longitude: -122.4194)
    /// Metres per simulated second.
    static let velocity = 12.0

    let vehicles: [Vehicle]
    /// How long the run lasts on the apps' clock.
    let simulatedDuration: Duration
    /// Put before every vehicle, trip and user name, so runs against a kept deployment do not collide.
    let prefix: String

    var trips: [Trip] { vehicles.flatMap(\.trips) }

    init(drivers: Int, consumers: Int, simulatedDuration: Duration, prefix: String = "") {
        self.simulatedDuration = simulatedDuration
        self.prefix = prefix
        let tripsPerVehicle = Int((Double(consumers) / Double(drivers)).rounded(.up))
        let seconds = Double(simulatedDuration.components.seconds)
        // Driving takes half the run, leaving the rest for dispatch calls and token fetches on a loaded machine.
        let leg = max(100, 0.5 * seconds * Self.velocity / Double(2 * max(tripsPerVehicle, 1)))
        var tripIDs = (0..<consumers).map { "\(prefix)trip-\($0 + 1)" }.makeIterator()
        vehicles = (1...drivers).map { index in
            let angle = Double(index) / Double(drivers) * 2 * .pi
            let start = Self.center.offset(north: 2000 * cos(angle), east: 2000 * sin(angle))
            var vehicle = Vehicle(id: "\(prefix)vehicle-\(index)", start: start, trips: [])
            var position = start
            for turn in 0..<tripsPerVehicle {
                guard let id = tripIDs.next() else { break }
                let heading = angle + Double(turn) * .pi / 2
                let pickup = position.offset(north: leg * cos(heading), east: leg * sin(heading))
                let dropoff = pickup.offset(north: -leg * sin(heading), east: leg * cos(heading))
                vehicle.trips.append(Trip(id: id, pickup: pickup, dropoff: dropoff))
                position = dropoff
            }
            return vehicle
        }
    }

    /// CreateVehicle's body: offline at its start, one exclusive seat type.
    static func vehicleBody(_ vehicle: Vehicle) -> JSONObject {
        [
            "vehicleState": "OFFLINE", "supportedTripTypes": ["EXCLUSIVE"], "maximumCapacity": 4,
            "vehicleType": ["category": "AUTO"],
            "lastLocation": .object(
                VehicleLocation(latitude: vehicle.start.latitude, longitude: vehicle.start.longitude).jsonObject
            ),
        ]
    }

    /// CreateTrip's body: assigned to `vehicleID` from the start.
    static func tripBody(_ trip: Trip, vehicleID: String) -> JSONObject {
        func point(_ coordinate: Coordinate) -> JSONValue {
            ["point": ["latitude": .double(coordinate.latitude), "longitude": .double(coordinate.longitude)]]
        }
        return [
            "vehicleId": .string(vehicleID), "tripType": "EXCLUSIVE", "pickupPoint": point(trip.pickup),
            "dropoffPoint": point(trip.dropoff),
        ]
    }
}
