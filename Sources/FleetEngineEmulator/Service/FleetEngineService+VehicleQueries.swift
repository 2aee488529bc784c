import FleetAuthServerSupport
public import FleetEngineAPI
import Foundation
import SwiftProtobuf

extension FleetEngineService {
    /// ListVehicles: a provider's vehicles in ID order, a page at a time, filtered by state, type, trip types,
    /// capacity, staleness, attributes (`key:value` lists and the AIP-160 `filter`), a viewport, and whether they
    /// are on a trip; `totalSize` counts the matches across all pages. Needs `vehicleid: "*"`.
    public func listVehicles(_ request: FleetEngineV1.ListVehiclesRequest, caller: Principal) async throws
        -> FleetEngineV1.ListVehiclesResponse
    {
        let provider = try ResourceName.provider(request.parent)
        try authorize(caller, .listVehicles, .allVehicles, provider: provider)
        let page = try Self.page(size: request.pageSize, token: request.pageToken)
        let matches = try VehicleCriteria(listing: request, now: now)
        var total = 0
        var listed: [FleetEngineV1.Vehicle] = []
        var more = false
        try await forEachVehicle(provider: provider) { stored, trips in
            guard matches.accepts(stored.vehicle, activeTrips: trips) else { return }
            total += 1
            guard page.afterID.map({ stored.id > $0 }) ?? true else { return }
            if listed.count < page.size {
                listed.append(render(stored.vehicle, provider: provider, id: stored.id, activeTrips: trips))
            } else {
                more = true
            }
        }
        var response = FleetEngineV1.ListVehiclesResponse()
        response.vehicles = listed
        response.totalSize = Int64(total)
        if more, let last = listed.last {
            response.nextPageToken = Self.pageToken(after: try ResourceName.vehicle(last.name).id)
        }
        return response
    }

    /// Calls `body` with every vehicle of `provider` in ID order and its active trips.
    func forEachVehicle(
        provider: String,
        _ body: (StoredVehicle, [StoredTrip]) async throws -> Void
    ) async throws {
        var afterID: String?
        while true {
            let chunk = try await store.vehicles(provider: provider, afterID: afterID, limit: 500)
            for stored in chunk {
                let trips = try await store.trips(
                    provider: provider,
                    vehicleID: stored.id,
                    activeOnly: true,
                    afterID: nil,
                    limit: 1000
                )
                try await body(stored, trips)
            }
            guard chunk.count == 500, let last = chunk.last else { return }
            afterID = last.id
        }
    }

    /// SearchVehicles: online vehicles that support the trip type, are of a requested type, reported within
    /// `maximumStaleness` (default 5 minutes), are within `pickupRadiusMeters` of the pickup point, have room for
    /// `minimumCapacity` more riders, match the attribute filters, and may take the trip given their current
    /// trips; at most `count`, ordered as asked. Distances and ETAs are estimates along straight lines
    /// (`RouteEstimator`), through the vehicle's remaining waypoints first.
    public func searchVehicles(_ request: FleetEngineV1.SearchVehiclesRequest, caller: Principal) async throws
        -> FleetEngineV1.SearchVehiclesResponse
    {
        let provider = try ResourceName.provider(request.parent)
        let tripID = request.tripID.isEmpty ? nil : try ResourceName.id(request.tripID, field: "tripId")
        try authorize(caller, .searchVehicles, .vehicleSearch(tripID: tripID), provider: provider)
        let search = try VehicleSearch(request)
        let criteria = try VehicleCriteria(searching: request, now: now)
        let now = self.now
        var matches: [(match: FleetEngineV1.VehicleMatch, key: Double)] = []
        try await forEachVehicle(provider: provider) { stored, trips in
            guard criteria.accepts(stored.vehicle, activeTrips: trips),
                let match = search.match(
                    stored.vehicle,
                    activeTrips: trips,
                    estimator: estimator,
                    now: now
                )
            else { return }
            var found = match
            found.vehicle = render(stored.vehicle, provider: provider, id: stored.id, activeTrips: trips)
            matches.append((found, search.sortKey(found)))
        }
        matches.sort { $0.key < $1.key }
        var response = FleetEngineV1.SearchVehiclesResponse()
        response.matches = matches.prefix(search.count).map(\.match)
        return response
    }
}

/// The filters ListVehicles and SearchVehicles share: state, type, trip types, capacity, staleness and
/// attributes, as each request spells them.
struct VehicleCriteria {
    var state: FleetEngineV1.VehicleState?
    var categories: Set<FleetEngineV1.Vehicle.VehicleType.Category> = []
    /// The vehicle must support one of these.
    var tripTypes: Set<FleetEngineV1.TripType> = []
    /// Room for this many riders: maximum capacity less the riders of active trips (search), or maximum
    /// capacity alone (list).
    var minimumCapacity: Int32?
    var countsActiveRiders = false
    /// Last location reported at or after this time.
    var freshSince: Date?
    /// Each list is one of: at least one (`anyOf`) or all (`allOf`) of its attributes must match.
    var allOf: [[(key: String, value: String)]] = []
    var anyOf: [[(key: String, value: String)]] = []
    var anyOfSets: [[(key: String, value: String)]] = []
    var filter: AttributeFilter?
    var viewport: FleetEngineV1.Viewport?
    var onTripOnly = false

    init(listing request: FleetEngineV1.ListVehiclesRequest, now: Date) throws(GoogleAPIError) {
        if request.vehicleState != .unknownVehicleState {
            try MessageChecks.known(request.vehicleState, "vehicleState")
            state = request.vehicleState
        }
        for (index, category) in request.vehicleTypeCategories.enumerated() {
            try MessageChecks.known(category, "vehicleTypeCategories[\(index)]")
        }
        categories = Set(request.vehicleTypeCategories)
        for (index, type) in request.tripTypes.enumerated() { try MessageChecks.known(type, "tripTypes[\(index)]") }
        tripTypes = Set(request.tripTypes)
        if request.hasMinimumCapacity {
            guard request.minimumCapacity.value >= 0 else {
                throw .invalidArgument("minimumCapacity must not be negative.")
            }
            minimumCapacity = request.minimumCapacity.value
        }
        if request.hasMaximumStaleness {
            freshSince = try Self.freshSince(request.maximumStaleness, now: now, field: "maximumStaleness")
        }
        allOf = try request.requiredAttributes.map { text throws(GoogleAPIError) in
            try Attributes.pairs(text, field: "requiredAttributes")
        }
        if allOf.contains(where: { $0.count != 1 }) {
            throw .invalidArgument("requiredAttributes entries must be key:value, one attribute each.")
        }
        allOf = [allOf.flatMap { $0 }]
        anyOf = try request.requiredOneOfAttributes.map { text throws(GoogleAPIError) in
            try Attributes.pairs(text, field: "requiredOneOfAttributes")
        }
        anyOfSets = try request.requiredOneOfAttributeSets.map { text throws(GoogleAPIError) in
            try Attributes.pairs(text, field: "requiredOneOfAttributeSets")
        }
        if !request.filter.isEmpty { filter = try AttributeFilter(request.filter) }
        if request.hasViewport {
            guard request.viewport.hasLow, request.viewport.hasHigh else {
                throw .invalidArgument("viewport needs both low and high.")
            }
            try MessageChecks.latLng(request.viewport.low, "viewport.low")
            try MessageChecks.latLng(request.viewport.high, "viewport.high")
            viewport = request.viewport
        }
        onTripOnly = request.onTripOnly
    }

    init(searching request: FleetEngineV1.SearchVehiclesRequest, now: Date) throws(GoogleAPIError) {
        state = .online
        categories = Set(request.vehicleTypes.map(\.category))
        tripTypes = Set(request.tripTypes)
        minimumCapacity = request.minimumCapacity
        countsActiveRiders = true
        freshSince =
            request.hasMaximumStaleness
            ? try Self.freshSince(request.maximumStaleness, now: now, field: "maximumStaleness")
            : now.addingTimeInterval(-300)
        allOf = [
            request.requiredAttributes.map { ($0.key, $0.vehicleAttributeValue.map(Attributes.string) ?? $0.value) }
        ]
        anyOf = request.requiredOneOfAttributes.map { list in
            list.attributes.map { ($0.key, $0.vehicleAttributeValue.map(Attributes.string) ?? $0.value) }
        }
        anyOfSets = request.requiredOneOfAttributeSets.map { list in
            list.attributes.map { ($0.key, $0.vehicleAttributeValue.map(Attributes.string) ?? $0.value) }
        }
        if !request.filter.isEmpty { filter = try AttributeFilter(request.filter) }
    }

    static func freshSince(_ staleness: Google_Protobuf_Duration, now: Date, field: String) throws(GoogleAPIError)
        -> Date
    {
        guard staleness.seconds >= 0, staleness.nanos >= 0 else {
            throw .invalidArgument("\(field) must not be negative.")
        }
        return now.addingTimeInterval(-staleness.timeInterval)
    }

    func accepts(_ vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip]) -> Bool {
        if let state, vehicle.vehicleState != state { return false }
        if !categories.isEmpty, !categories.contains(vehicle.vehicleType.category) { return false }
        if !tripTypes.isEmpty, tripTypes.isDisjoint(with: vehicle.supportedTripTypes) { return false }
        if let minimumCapacity {
            let riders =
                countsActiveRiders ? activeTrips.reduce(Int32(0)) { $0 + max($1.trip.numberOfPassengers, 1) } : 0
            if vehicle.maximumCapacity - riders < minimumCapacity { return false }
        }
        if let freshSince {
            let location = vehicle.lastLocation
            let seen = location.hasServerTime ? location.serverTime.date : location.updateTime.date
            guard vehicle.hasLastLocation, location.hasServerTime || location.hasUpdateTime, seen >= freshSince
            else { return false }
        }
        if onTripOnly, activeTrips.isEmpty { return false }
        if let viewport {
            guard vehicle.hasLastLocation, vehicle.lastLocation.hasLocation,
                Self.contains(viewport, vehicle.lastLocation.location)
            else { return false }
        }
        let attributes = Attributes.dictionary(vehicle.attributes)
        func has(_ pair: (key: String, value: String)) -> Bool { attributes[pair.key] == pair.value }
        if !allOf.allSatisfy({ $0.allSatisfy(has) }) { return false }
        if !anyOf.allSatisfy({ $0.contains(where: has) }) { return false }
        if !anyOfSets.isEmpty, !anyOfSets.contains(where: { $0.allSatisfy(has) }) { return false }
        if let filter, !filter.matches(attributes) { return false }
        return true
    }

    /// Whether `point` is inside `viewport` (which may cross the 180th meridian).
    static func contains(_ viewport: FleetEngineV1.Viewport, _ point: FleetEngineV1.LatLng) -> Bool {
        guard (viewport.low.latitude...viewport.high.latitude).contains(point.latitude) else { return false }
        if viewport.low.longitude <= viewport.high.longitude {
            return (viewport.low.longitude...viewport.high.longitude).contains(point.longitude)
        }
        return point.longitude >= viewport.low.longitude || point.longitude <= viewport.high.longitude
    }
}
