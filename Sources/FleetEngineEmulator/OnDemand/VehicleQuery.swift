package import FleetEngineAPI
package import Foundation
import SwiftProtobuf

/// Which vehicles a listing or a search reads: the conditions a store answers from its indexes, so that the
/// cost of a query follows the vehicles it matches, not the size of the fleet.
///
/// Every condition is exact (``accepts(_:id:activeTrips:)`` states it), and a store's answer must equal what a scan of
/// every vehicle with ``accepts(_:id:activeTrips:)`` gives (the conformance suite compares the two on random fleets).
/// A search asks for a box around its pickup point, larger than its radius, and measures each candidate itself.
package struct VehicleQuery: Sendable, Hashable {
    /// The vehicle's state.
    package var state: FleetEngineV1.VehicleState?
    /// The vehicle type's category is one of these (any when empty).
    package var categories: Set<FleetEngineV1.Vehicle.VehicleType.Category> = []
    /// The vehicle supports at least one of these trip types (any when empty).
    package var tripTypes: Set<FleetEngineV1.TripType> = []
    /// `maximumCapacity` is at least this.
    package var minimumCapacity: Int32?
    /// The last location was reported (its server time, else its update time) at or after this time.
    package var freshSince: Date?
    /// The last location lies in one of these boxes (any location, or none, when nil).
    package var area: [Box]?
    /// The vehicle has at least one active trip.
    package var onTripOnly = false
    /// The vehicle's attributes (compared as strings) satisfy this.
    package var attributes: AttributeCondition?
    /// The vehicle's ID is one of these (any ID when nil).
    package var ids: Set<String>?

    package init() {}

    /// How a store may count the matches without reading them, when the query is that simple: every vehicle
    /// or one state (from counts kept by the store), or one attribute's value (the attribute's rows in the
    /// attribute index; a vehicle has at most one value per key).
    enum CountShortcut: Equatable {
        case every
        case state(Int32)
        case attribute(key: String, value: String)
    }

    var countShortcut: CountShortcut? {
        guard categories.isEmpty, tripTypes.isEmpty, minimumCapacity == nil, freshSince == nil, area == nil,
            !onTripOnly, ids == nil
        else { return nil }
        guard var condition = attributes else {
            return state.map { .state(Int32(truncatingIfNeeded: $0.rawValue)) } ?? .every
        }
        guard state == nil else { return nil }
        while case .all(let parts) = condition, parts.count == 1 { condition = parts[0] }
        guard case .equals(let key, let value) = condition else { return nil }
        return .attribute(key: key, value: value)
    }

    /// A latitude and longitude range, bounds included, with `lowLongitude <= highLongitude`.
    package struct Box: Sendable, Hashable {
        package var lowLatitude: Double
        package var highLatitude: Double
        package var lowLongitude: Double
        package var highLongitude: Double

        package init(lowLatitude: Double, highLatitude: Double, lowLongitude: Double, highLongitude: Double) {
            self.lowLatitude = lowLatitude
            self.highLatitude = highLatitude
            self.lowLongitude = lowLongitude
            self.highLongitude = highLongitude
        }

        package func contains(latitude: Double, longitude: Double) -> Bool {
            latitude >= lowLatitude && latitude <= highLatitude && longitude >= lowLongitude
                && longitude <= highLongitude
        }

        /// A request's viewport as its boxes (``covering(_:)``), checked as Google's `Viewport` says: both corners
        /// set and in range, and not empty (`low.latitude` above `high.latitude`, or `low.longitude` 180° with
        /// `high.longitude` -180°). `INVALID_ARGUMENT` otherwise.
        static func checked(_ viewport: FleetEngineV1.Viewport) throws(GoogleAPIError) -> [Box] {
            guard viewport.hasLow, viewport.hasHigh else { throw .invalidArgument("viewport needs both low and high.") }
            try MessageChecks.latLng(viewport.low, "viewport.low")
            try MessageChecks.latLng(viewport.high, "viewport.high")
            guard viewport.low.latitude <= viewport.high.latitude else {
                throw .invalidArgument("viewport is empty: low.latitude is above high.latitude.")
            }
            guard viewport.low.longitude != 180 || viewport.high.longitude != -180 else {
                throw .invalidArgument(
                    "viewport is empty: low.longitude 180 to high.longitude -180 spans no longitude."
                )
            }
            return covering(viewport)
        }

        /// A viewport's boxes: one, or two when it crosses the 180th meridian (`low.longitude > high.longitude`).
        package static func covering(_ viewport: FleetEngineV1.Viewport) -> [Box] {
            let low = viewport.low
            let high = viewport.high
            if low.longitude <= high.longitude {
                return [
                    Box(
                        lowLatitude: low.latitude,
                        highLatitude: high.latitude,
                        lowLongitude: low.longitude,
                        highLongitude: high.longitude
                    )
                ]
            }
            return [
                Box(
                    lowLatitude: low.latitude,
                    highLatitude: high.latitude,
                    lowLongitude: low.longitude,
                    highLongitude: 180
                ),
                Box(
                    lowLatitude: low.latitude,
                    highLatitude: high.latitude,
                    lowLongitude: -180,
                    highLongitude: high.longitude
                ),
            ]
        }

        /// Boxes holding every point within `meters` (great-circle, mean Earth radius) of a point: a latitude band
        /// and the widest longitude span a circle of that radius reaches, split at the 180th meridian, and every
        /// longitude when the circle reaches a pole. A little larger than the circle, never smaller.
        package static func around(latitude: Double, longitude: Double, meters: Double) -> [Box] {
            let angle = meters * 1.001 / 6_371_008.8 + 1e-9
            let degrees = angle * 180 / .pi
            let low = latitude - degrees
            let high = latitude + degrees
            if low <= -90 || high >= 90 {
                return [
                    Box(lowLatitude: max(low, -90), highLatitude: min(high, 90), lowLongitude: -180, highLongitude: 180)
                ]
            }
            let ratio = sin(angle) / cos(latitude * .pi / 180)
            guard ratio < 1 else {
                return [Box(lowLatitude: low, highLatitude: high, lowLongitude: -180, highLongitude: 180)]
            }
            let span = asin(ratio) * 180 / .pi * 1.001 + 1e-9
            let west = longitude - span
            let east = longitude + span
            if west < -180 {
                return [
                    Box(lowLatitude: low, highLatitude: high, lowLongitude: -180, highLongitude: east),
                    Box(lowLatitude: low, highLatitude: high, lowLongitude: west + 360, highLongitude: 180),
                ]
            }
            if east > 180 {
                return [
                    Box(lowLatitude: low, highLatitude: high, lowLongitude: west, highLongitude: 180),
                    Box(lowLatitude: low, highLatitude: high, lowLongitude: -180, highLongitude: east - 360),
                ]
            }
            return [Box(lowLatitude: low, highLatitude: high, lowLongitude: west, highLongitude: east)]
        }
    }

    /// Whether `vehicle`, with these active trips, satisfies every condition: the meaning of the query, which
    /// a store's indexes must reproduce.
    package func accepts(_ vehicle: FleetEngineV1.Vehicle, id: String, activeTrips: [StoredTrip]) -> Bool {
        if let ids, !ids.contains(id) { return false }
        let row = VehicleRow(vehicle)
        if let state, row.state != Int32(truncatingIfNeeded: state.rawValue) { return false }
        if !categories.isEmpty,
            !categories.contains(where: { Int32(truncatingIfNeeded: $0.rawValue) == row.category })
        {
            return false
        }
        if !tripTypes.isEmpty, row.tripTypes & Self.mask(tripTypes) == 0 { return false }
        if let minimumCapacity, row.capacity < minimumCapacity { return false }
        if let freshSince {
            guard let seen = row.seen, seen >= freshSince.timeIntervalSinceReferenceDate else { return false }
        }
        if let area {
            guard let latitude = row.latitude, let longitude = row.longitude,
                area.contains(where: { $0.contains(latitude: latitude, longitude: longitude) })
            else { return false }
        }
        if onTripOnly, activeTrips.isEmpty { return false }
        if let attributes, !attributes.matches(row.attributes) { return false }
        return true
    }

    /// Trip types as a bit mask (bit `n` for the value numbered `n`), as stores index them.
    static func mask(_ types: some Sequence<FleetEngineV1.TripType>) -> Int64 {
        types.reduce(Int64(0)) { mask, type in
            (0..<63).contains(type.rawValue) ? mask | (1 << Int64(type.rawValue)) : mask
        }
    }
}

/// A condition on a vehicle's attributes, each compared as its string form (`true`, `10`, `2.5`).
package indirect enum AttributeCondition: Sendable, Hashable {
    /// The vehicle has the attribute `key` with this value.
    case equals(key: String, value: String)
    /// Every part holds (true when there are none).
    case all([AttributeCondition])
    /// At least one part holds (false when there are none).
    case any([AttributeCondition])
    /// The condition does not hold.
    case not(AttributeCondition)

    /// Whether attributes (string forms by key) satisfy the condition.
    package func matches(_ attributes: [String: String]) -> Bool {
        switch self {
        case .equals(let key, let value): attributes[key] == value
        case .all(let parts): parts.allSatisfy { $0.matches(attributes) }
        case .any(let parts): parts.contains { $0.matches(attributes) }
        case .not(let inner): !inner.matches(attributes)
        }
    }
}

/// A vehicle and its active trips, as a query reads them.
package struct MatchedVehicle: Sendable, Hashable {
    package var id: String
    package var vehicle: FleetEngineV1.Vehicle
    package var activeTrips: [StoredTrip]

    package init(id: String, vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip]) {
        self.id = id
        self.vehicle = vehicle
        self.activeTrips = activeTrips
    }
}

/// Where a vehicle last reported, as a store indexes it.
package struct VehiclePosition: Sendable, Hashable {
    package var id: String
    package var latitude: Double
    package var longitude: Double

    package init(id: String, latitude: Double, longitude: Double) {
        self.id = id
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The position of a vehicle with a last location, else nil.
    init?(_ id: String, _ vehicle: FleetEngineV1.Vehicle) {
        let row = VehicleRow(vehicle)
        guard let latitude = row.latitude, let longitude = row.longitude else { return nil }
        self.init(id: id, latitude: latitude, longitude: longitude)
    }
}

/// What a query answered: a page of vehicles in ID order and, when asked, how many match on every page.
package struct VehicleQueryResult: Sendable, Hashable {
    package var vehicles: [MatchedVehicle]
    package var totalCount: Int?

    package init(vehicles: [MatchedVehicle], totalCount: Int?) {
        self.vehicles = vehicles
        self.totalCount = totalCount
    }
}

extension OnDemandStore {
    /// The default answer: reads every vehicle of the provider and keeps those `query` accepts. Stores answer
    /// from their indexes instead; this is the reference they are compared with.
    package func scanVehicles(
        provider: String,
        matching query: VehicleQuery,
        after firstAfter: String?,
        limit: Int?,
        counting: Bool
    ) async throws -> VehicleQueryResult {
        var activeTrips: [String: [StoredTrip]] = [:]
        var afterTrip: String?
        while true {
            let chunk = try await trips(
                provider: provider,
                vehicleID: nil,
                activeOnly: true,
                afterID: afterTrip,
                limit: 500
            )
            for trip in chunk { if let vehicleID = trip.vehicleID { activeTrips[vehicleID, default: []].append(trip) } }
            guard chunk.count == 500, let last = chunk.last else { break }
            afterTrip = last.id
        }
        var found: [MatchedVehicle] = []
        var total = 0
        var afterID = counting ? nil : firstAfter
        while true {
            let chunk = try await vehicles(provider: provider, afterID: afterID, limit: 500)
            for stored in chunk {
                let trips = activeTrips[stored.id] ?? []
                guard query.accepts(stored.vehicle, id: stored.id, activeTrips: trips) else { continue }
                total += 1
                guard firstAfter.map({ stored.id > $0 }) ?? true else { continue }
                if limit.map({ found.count < $0 }) ?? true {
                    found.append(MatchedVehicle(id: stored.id, vehicle: stored.vehicle, activeTrips: trips))
                } else if !counting {
                    return VehicleQueryResult(vehicles: found, totalCount: nil)
                }
            }
            guard chunk.count == 500, let last = chunk.last else { break }
            afterID = last.id
        }
        return VehicleQueryResult(vehicles: found, totalCount: counting ? total : nil)
    }

    package func vehicles(
        provider: String,
        matching query: VehicleQuery,
        after afterID: String?,
        limit: Int?,
        counting: Bool
    ) async throws -> VehicleQueryResult {
        try await scanVehicles(provider: provider, matching: query, after: afterID, limit: limit, counting: counting)
    }

    package func vehiclePositions(provider: String, matching query: VehicleQuery) async throws -> [VehiclePosition] {
        try await scanVehicles(provider: provider, matching: query, after: nil, limit: nil, counting: false).vehicles
            .compactMap { VehiclePosition($0.id, $0.vehicle) }
    }
}

/// The values a store indexes for one vehicle, derived from its message.
struct VehicleRow {
    var state: Int32
    var category: Int32
    var capacity: Int32
    var tripTypes: Int64
    /// `timeIntervalSinceReferenceDate` of the last report, as `Date` compares it.
    var seen: Double?
    var latitude: Double?
    var longitude: Double?
    var attributes: [String: String]

    init(_ vehicle: FleetEngineV1.Vehicle) {
        state = Int32(truncatingIfNeeded: vehicle.vehicleState.rawValue)
        category = Int32(truncatingIfNeeded: vehicle.vehicleType.category.rawValue)
        capacity = vehicle.maximumCapacity
        tripTypes = VehicleQuery.mask(vehicle.supportedTripTypes)
        let location = vehicle.lastLocation
        if vehicle.hasLastLocation, location.hasServerTime || location.hasUpdateTime {
            seen =
                (location.hasServerTime ? location.serverTime.date : location.updateTime.date)
                .timeIntervalSinceReferenceDate
        }
        if vehicle.hasLastLocation, location.hasLocation {
            latitude = location.location.latitude
            longitude = location.location.longitude
        }
        attributes = Attributes.dictionary(vehicle.attributes)
    }

    /// Whether the values other than the last report's time and place are the same (a store then writes only those).
    func sameOutsideLocation(as other: VehicleRow) -> Bool {
        state == other.state && category == other.category && capacity == other.capacity
            && tripTypes == other.tripTypes && attributes == other.attributes
    }
}
