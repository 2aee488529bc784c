import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import SwiftProtobuf

extension OnDemandService {
    /// ListVehicles: a provider's vehicles in ID order, a page at a time, filtered by state, type, trip types,
    /// capacity, staleness, attributes (`key:value` lists and the AIP-160 `filter`), a viewport, and whether they
    /// are on a trip; `totalSize` counts the matches across all pages. Needs `vehicleid: "*"`.
    public func listVehicles(_ request: FleetEngineV1.ListVehiclesRequest, caller: Principal) async throws
        -> FleetEngineV1.ListVehiclesResponse
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        try AccessPolicy.check(caller, .listVehicles, .allVehicles, provider: provider)
        let page = try Paging.page(request)
        let criteria = try VehicleCriteria(listing: request, now: now)
        let found = try await store.vehicles(
            provider: provider,
            matching: criteria.query,
            after: page.afterID,
            limit: page.size + 1,
            counting: true
        )
        var response = FleetEngineV1.ListVehiclesResponse()
        response.vehicles = found.vehicles.prefix(page.size).map {
            render($0.vehicle, provider: provider, id: $0.id, activeTrips: $0.activeTrips)
        }
        response.totalSize = Int64(found.totalCount ?? 0)
        if found.vehicles.count > page.size, let last = found.vehicles.prefix(page.size).last {
            response.nextPageToken = Paging.token(after: last.id, of: request)
        }
        return response
    }

    /// SearchVehicles: online vehicles that support the trip type, are of a requested type, reported within
    /// `maximumStaleness` (default 5 minutes), are within `pickupRadiusMeters` of the pickup point, have room for
    /// `minimumCapacity` more riders, match the attribute filters, and may take the trip given their current
    /// trips; at most `count`, ordered as asked. Distances and ETAs are estimates along straight lines
    /// (`RouteEstimator`), through the vehicle's remaining waypoints first.
    public func searchVehicles(_ request: FleetEngineV1.SearchVehiclesRequest, caller: Principal) async throws
        -> FleetEngineV1.SearchVehiclesResponse
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        let tripID = request.tripID.isEmpty ? nil : try ResourceName.id(request.tripID, field: "tripId")
        try AccessPolicy.check(caller, .searchVehicles, .vehicleSearch(tripID: tripID), provider: provider)
        let search = try VehicleSearch(request)
        let criteria = try VehicleCriteria(searching: request, now: now)
        let now = self.now
        // A caller that may not read every vehicle (a consumer) searches approximate positions and sees
        // approximate vehicles (``ApproximateVehicle``).
        let approximate = (try? AccessPolicy.check(caller, .getVehicle, .allVehicles, provider: provider)) == nil
        // Nearest first: the store answers the positions of the vehicles that pass the filters in a box around the
        // pickup point; those within the radius are read whole in order of straight-line distance, a few at a
        // time, until no vehicle left can rank among the best `count` (no route is shorter than a straight line).
        var query = criteria.query
        query.area = VehicleQuery.Box.around(
            latitude: search.pickup.latitude,
            longitude: search.pickup.longitude,
            meters: search.radius
        )
        let ranked = try await store.vehiclePositions(provider: provider, matching: query)
            .map {
                (
                    distance: RouteEstimator.distance(
                        approximate ? ApproximateVehicle.snap($0.latitude) : $0.latitude,
                        approximate ? ApproximateVehicle.snap($0.longitude) : $0.longitude,
                        search.pickup.latitude,
                        search.pickup.longitude
                    ), id: $0.id
                )
            }
            .filter { $0.distance <= search.radius }
            .sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
        query.area = nil
        var best: [(match: FleetEngineV1.VehicleMatch, key: Double, id: String)] = []
        var next = 0
        while next < ranked.count {
            if best.count >= search.count,
                search.lowerBound(straightDistance: ranked[next].distance, now: now, speed: estimator.speed)
                    > best[search.count - 1].key
            {
                break
            }
            let batch = ranked[next..<min(next + search.count, ranked.count)]
            next += batch.count
            query.ids = Set(batch.map(\.id))
            for candidate in try await store.vehicles(
                provider: provider,
                matching: query,
                after: nil,
                limit: nil,
                counting: false
            ).vehicles {
                let vehicle = approximate ? ApproximateVehicle.searched(candidate.vehicle) : candidate.vehicle
                guard criteria.hasRoom(vehicle, activeTrips: candidate.activeTrips),
                    var match = search.match(
                        vehicle,
                        activeTrips: candidate.activeTrips,
                        estimator: estimator,
                        now: now
                    )
                else { continue }
                match.vehicle = render(
                    vehicle,
                    provider: provider,
                    id: candidate.id,
                    activeTrips: candidate.activeTrips
                )
                if approximate { match = ApproximateVehicle.answered(match) }
                best.append((match, search.sortKey(match), candidate.id))
            }
            best.sort { ($0.key, $0.id) < ($1.key, $1.id) }
            best = Array(best.prefix(search.count))
        }
        var response = FleetEngineV1.SearchVehiclesResponse()
        response.matches = best.map(\.match)
        return response
    }
}

/// The filters ListVehicles and SearchVehicles share (state, type, trip types, capacity, staleness and
/// attributes), checked as each request spells them, as the ``VehicleQuery`` the store answers.
struct VehicleCriteria {
    var query = VehicleQuery()
    /// For a search: room for this many riders, maximum capacity less the riders of active trips (the query
    /// asks for the maximum capacity alone, which a listing means by `minimumCapacity`).
    var minimumRoom: Int32?

    init(listing request: FleetEngineV1.ListVehiclesRequest, now: Date) throws(GoogleAPIError) {
        if request.vehicleState != .unknownVehicleState { query.state = request.vehicleState }
        for (index, category) in request.vehicleTypeCategories.enumerated() {
            guard category != .unknown else {
                throw .invalidArgument("vehicleTypeCategories[\(index)] cannot be UNKNOWN.")
            }
        }
        query.categories = Set(request.vehicleTypeCategories)
        query.tripTypes = Set(request.tripTypes)
        if request.hasMinimumCapacity {
            guard request.minimumCapacity.value >= 0 else {
                throw .invalidArgument("minimumCapacity must not be negative.")
            }
            query.minimumCapacity = request.minimumCapacity.value
        }
        if request.hasMaximumStaleness {
            query.freshSince = try Self.freshSince(request.maximumStaleness, now: now, field: "maximumStaleness")
        }
        var conditions: [AttributeCondition] = []
        for text in request.requiredAttributes {
            let pairs = try Attributes.pairs(text, field: "requiredAttributes")
            guard pairs.count == 1 else {
                throw .invalidArgument("requiredAttributes entries must be key:value, one attribute each.")
            }
            conditions.append(.equals(key: pairs[0].key, value: pairs[0].value))
        }
        for text in request.requiredOneOfAttributes {
            conditions.append(.any(try Attributes.pairs(text, field: "requiredOneOfAttributes").map(Self.equals)))
        }
        if !request.requiredOneOfAttributeSets.isEmpty {
            conditions.append(
                .any(
                    try request.requiredOneOfAttributeSets.map { text throws(GoogleAPIError) in
                        .all(try Attributes.pairs(text, field: "requiredOneOfAttributeSets").map(Self.equals))
                    }
                )
            )
        }
        try Self.add(filter: request.filter, to: &conditions)
        if !conditions.isEmpty { query.attributes = .all(conditions) }
        if request.hasViewport { query.area = try VehicleQuery.Box.checked(request.viewport) }
        query.onTripOnly = request.onTripOnly
    }

    init(searching request: FleetEngineV1.SearchVehiclesRequest, now: Date) throws(GoogleAPIError) {
        query.state = .online
        query.categories = Set(request.vehicleTypes.map(\.category))
        query.tripTypes = Set(request.tripTypes)
        query.minimumCapacity = request.minimumCapacity
        minimumRoom = request.minimumCapacity
        query.freshSince =
            request.hasMaximumStaleness
            ? try Self.freshSince(request.maximumStaleness, now: now, field: "maximumStaleness")
            : now.addingTimeInterval(-300)
        func equals(_ attribute: FleetEngineV1.VehicleAttribute) -> AttributeCondition {
            .equals(
                key: attribute.key,
                value: attribute.vehicleAttributeValue.map(Attributes.string) ?? attribute.value
            )
        }
        var conditions: [AttributeCondition] = request.requiredAttributes.map(equals)
        conditions += request.requiredOneOfAttributes.map { .any($0.attributes.map(equals)) }
        if !request.requiredOneOfAttributeSets.isEmpty {
            conditions.append(.any(request.requiredOneOfAttributeSets.map { .all($0.attributes.map(equals)) }))
        }
        try Self.add(filter: request.filter, to: &conditions)
        if !conditions.isEmpty { query.attributes = .all(conditions) }
    }

    /// How many `key:value` conditions the required-attribute fields may hold together: as many as a vehicle may
    /// have attributes (the AIP-160 `filter` has its own bound, ``AIPFilter/maximumRestrictions``).
    static let maximumAttributeConditions = Attributes.maximumCount

    /// Adds `filter`'s condition to `conditions`, those of the required-attribute fields (one for each entry), which
    /// `filter` replaces: Google says they must be empty when it is set. The required-attribute fields hold at most
    /// ``maximumAttributeConditions`` pairs, so no request builds a query past what a database takes.
    static func add(filter: String, to conditions: inout [AttributeCondition]) throws(GoogleAPIError) {
        func pairs(_ condition: AttributeCondition) -> Int {
            switch condition {
            case .equals: 1
            case .all(let parts), .any(let parts): parts.reduce(0) { $0 + pairs($1) }
            case .not(let inner): pairs(inner)
            }
        }
        let count = conditions.reduce(0) { $0 + pairs($1) }
        guard count <= maximumAttributeConditions else {
            throw .invalidArgument(
                "requiredAttributes, requiredOneOfAttributes and requiredOneOfAttributeSets hold \(count) attributes together; at most \(maximumAttributeConditions) are allowed."
            )
        }
        guard !filter.isEmpty else { return }
        guard conditions.isEmpty else {
            throw .invalidArgument(
                "filter replaces requiredAttributes, requiredOneOfAttributes and requiredOneOfAttributeSets; when filter is set, they must be empty."
            )
        }
        conditions.append(try AttributeFilter(filter).condition)
    }

    private static func equals(_ pair: (key: String, value: String)) -> AttributeCondition {
        .equals(key: pair.key, value: pair.value)
    }

    static func freshSince(_ staleness: Google_Protobuf_Duration, now: Date, field: String) throws(GoogleAPIError)
        -> Date
    {
        guard staleness.seconds >= 0, staleness.nanos >= 0 else {
            throw .invalidArgument("\(field) must not be negative.")
        }
        return now.addingTimeInterval(-staleness.timeInterval)
    }

    /// Whether a searched vehicle has room for ``minimumRoom`` riders beside those of its active trips.
    func hasRoom(_ vehicle: FleetEngineV1.Vehicle, activeTrips: [StoredTrip]) -> Bool {
        guard let minimumRoom else { return true }
        let riders = activeTrips.reduce(Int32(0)) { $0 + max($1.trip.numberOfPassengers, 1) }
        return vehicle.maximumCapacity - riders >= minimumRoom
    }
}
