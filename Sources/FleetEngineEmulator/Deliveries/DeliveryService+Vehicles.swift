import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import SwiftProtobuf

extension DeliveryService {
    /// UpdateDeliveryVehicle's fields: every one but `name`.
    static let updatableVehicle = FieldMasks.Updatable(FleetEngineDelivery.DeliveryVehicle.self)

    /// CreateDeliveryVehicle: only `type`, `lastLocation` and `attributes` may be set (`name` is ignored); a vehicle
    /// created without `type` is `AUTO`.
    public func createDeliveryVehicle(_ request: FleetEngineDelivery.CreateDeliveryVehicleRequest, caller: Principal)
        async throws -> FleetEngineDelivery.DeliveryVehicle
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        let id = try ResourceName.id(request.deliveryVehicleID, field: "deliveryVehicleId")
        try AccessPolicy.check(caller, .createDeliveryVehicle, .deliveryVehicle(id), provider: provider)
        var vehicle = request.deliveryVehicle
        var rest = vehicle
        rest.name = ""
        rest.clearLastLocation()
        rest.attributes = []
        rest.type = .unspecified
        let extra = DeliveryChecks.setFields(rest)
        guard extra.isEmpty else {
            throw GoogleAPIError.invalidArgument(
                "deliveryVehicle may set only type, lastLocation and attributes on create; found \(extra.joined(separator: ", "))."
            )
        }
        if vehicle.hasLastLocation { try MessageChecks.location(vehicle.lastLocation, "deliveryVehicle.lastLocation") }
        vehicle.attributes = try Attributes.normalized(
            vehicle.attributes,
            field: "deliveryVehicle.attributes",
            maximumPair: nil
        )
        vehicle.name = ""
        if vehicle.type == .unspecified { vehicle.type = .auto }
        if vehicle.hasLastLocation { vehicle.lastLocation.serverTime = Google_Protobuf_Timestamp(date: now) }
        try await store.insertDeliveryVehicle(vehicle, provider: provider, id: id)
        return render(vehicle, provider: provider, id: id)
    }

    /// GetDeliveryVehicle, the only answer whose stops carry each task's `targetTimeWindow`.
    public func getDeliveryVehicle(_ request: FleetEngineDelivery.GetDeliveryVehicleRequest, caller: Principal)
        async throws -> FleetEngineDelivery.DeliveryVehicle
    {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.resource(request.name, collection: "deliveryVehicles")
        try AccessPolicy.check(caller, .getDeliveryVehicle, .deliveryVehicle(id), provider: provider)
        guard var vehicle = try await store.deliveryVehicle(provider: provider, id: id) else {
            throw GoogleAPIError.notFound("Delivery vehicle \(request.name) not found.")
        }
        for segment in vehicle.remainingVehicleJourneySegments.indices {
            for index in vehicle.remainingVehicleJourneySegments[segment].stop.tasks.indices {
                let taskID = vehicle.remainingVehicleJourneySegments[segment].stop.tasks[index].taskID
                if let task = try await store.task(provider: provider, id: taskID), task.hasTargetTimeWindow {
                    vehicle.remainingVehicleJourneySegments[segment].stop.tasks[index].targetTimeWindow =
                        task.targetTimeWindow
                }
            }
        }
        return render(vehicle, provider: provider, id: id)
    }

    /// DeleteDeliveryVehicle: `FAILED_PRECONDITION` while an OPEN task is assigned to it.
    public func deleteDeliveryVehicle(_ request: FleetEngineDelivery.DeleteDeliveryVehicleRequest, caller: Principal)
        async throws
    {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.resource(request.name, collection: "deliveryVehicles")
        try AccessPolicy.check(caller, .deleteDeliveryVehicle, .deliveryVehicle(id), provider: provider)
        try await store.deleteDeliveryVehicle(provider: provider, id: id)
    }

    /// UpdateDeliveryVehicle: writes the fields the mask names. Location and navigation fields need
    /// `deliveryvehicles.updateLocation`, `remainingVehicleJourneySegments` `deliveryvehicles.updateVehicleStops`,
    /// `attributes` and `type` `deliveryvehicles.update`. The journey segments list every remaining stop: a task
    /// named there is assigned to the vehicle (it must exist, be OPEN and not be assigned to another vehicle); an
    /// OPEN task of the vehicle no longer named is CLOSED — the way an assigned task is closed.
    public func updateDeliveryVehicle(_ request: FleetEngineDelivery.UpdateDeliveryVehicleRequest, caller: Principal)
        async throws -> FleetEngineDelivery.DeliveryVehicle
    {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.resource(
            request.deliveryVehicle.name,
            collection: "deliveryVehicles",
            field: "deliveryVehicle.name"
        )
        let paths = try FieldMasks.paths(request.updateMask.paths, updating: Self.updatableVehicle)
        var methods: [FleetEngineMethod] = []
        if paths.contains(where: FleetEngineMethod.deliveryDriverReportableFields.contains) {
            methods.append(.updateDeliveryVehicleLocation)
        }
        if paths.contains("remaining_vehicle_journey_segments") { methods.append(.updateDeliveryVehicleStops) }
        if paths.contains("attributes") || paths.contains("type") { methods.append(.updateDeliveryVehicle) }
        for method in methods { try AccessPolicy.check(caller, method, .deliveryVehicle(id), provider: provider) }

        var source = request.deliveryVehicle
        if paths.contains("last_location") {
            guard source.hasLastLocation else {
                throw GoogleAPIError.invalidArgument("deliveryVehicle.lastLocation is in the update mask but not set.")
            }
            try MessageChecks.location(source.lastLocation, "deliveryVehicle.lastLocation")
            source.lastLocation.serverTime = Google_Protobuf_Timestamp(date: now)
        }
        if paths.contains("past_locations") {
            for (index, location) in source.pastLocations.enumerated() {
                try MessageChecks.location(location, "deliveryVehicle.pastLocations[\(index)]")
            }
        }
        if paths.contains("remaining_duration"), source.hasRemainingDuration {
            try DeliveryChecks.duration(source.remainingDuration, "deliveryVehicle.remainingDuration")
        }
        if paths.contains("remaining_distance_meters"), source.hasRemainingDistanceMeters,
            source.remainingDistanceMeters.value < 0
        {
            throw GoogleAPIError.invalidArgument("deliveryVehicle.remainingDistanceMeters must not be negative.")
        }
        source.attributes = try Attributes.normalized(
            source.attributes,
            field: "deliveryVehicle.attributes",
            maximumPair: nil
        )
        var named: [String] = []
        if paths.contains("remaining_vehicle_journey_segments") {
            named = try DeliveryChecks.segments(
                source.remainingVehicleJourneySegments,
                field: "deliveryVehicle.remainingVehicleJourneySegments"
            )
        }
        let given = source
        let listed = named
        let speed = self.speed
        let updated = try await store.updateDeliveryVehicle(provider: provider, id: id, naming: Set(listed)) {
            current,
            tasks in
            var next = current
            var changed: [String: FleetEngineDelivery.Task] = [:]
            for path in paths {
                switch path {
                case "past_locations":
                    // Input only: a past location newer than the last one becomes the last location.
                    if let latest = given.pastLocations.max(by: { $0.updateTime.date < $1.updateTime.date }),
                        !next.hasLastLocation || latest.updateTime.date > next.lastLocation.updateTime.date
                    {
                        next.lastLocation = latest
                    }
                case "type": next.type = given.type == .unspecified ? .auto : given.type
                case "remaining_vehicle_journey_segments":
                    changed = try Self.assign(
                        listed,
                        to: id,
                        tasks: tasks,
                        provider: provider
                    )
                    next.remainingVehicleJourneySegments = given.remainingVehicleJourneySegments
                default: next.replaceField(path, from: given)
                }
            }
            if next.currentRouteSegment.isEmpty {
                // Google ignores the segment's end point and remaining distance and duration without a segment.
                for field in ["current_route_segment_end_point", "remaining_distance_meters", "remaining_duration"] {
                    next.replaceField(field, from: current)
                }
            }
            next.pastLocations = []
            if paths.contains("remaining_vehicle_journey_segments") {
                next.remainingVehicleJourneySegments = Self.annotated(
                    next.remainingVehicleJourneySegments,
                    from: next.hasLastLocation && next.lastLocation.hasLocation ? next.lastLocation.location : nil,
                    tasks: tasks,
                    speed: speed
                )
            }
            return DeliveryVehicleChange(vehicle: next, tasks: changed)
        }
        return render(updated, provider: provider, id: id)
    }

    /// Journey segments as stored, their output-only fields computed as Fleet Engine fills them: each stop's tasks
    /// with their `taskDuration` (never a `targetTimeWindow`, which only GetDeliveryVehicle's answer carries), and
    /// each segment's `drivingDistanceMeters`, `drivingDuration` and `path` from the previous stop — the first from
    /// `start`, the vehicle's location as the stops are written — in straight lines at `speed` (<doc:Deliveries>).
    /// Whatever the request put in those fields is ignored.
    static func annotated(
        _ segments: [FleetEngineDelivery.VehicleJourneySegment],
        from start: FleetEngineV1.LatLng?,
        tasks: [String: FleetEngineDelivery.Task],
        speed: Double
    ) -> [FleetEngineDelivery.VehicleJourneySegment] {
        var from = start
        return segments.map { segment in
            var copy = segment
            copy.clearDrivingDistanceMeters()
            copy.clearDrivingDuration()
            copy.path = []
            for index in copy.stop.tasks.indices {
                copy.stop.tasks[index].clearTargetTimeWindow()
                copy.stop.tasks[index].clearTaskDuration()
                if let task = tasks[copy.stop.tasks[index].taskID], task.hasTaskDuration {
                    copy.stop.tasks[index].taskDuration = task.taskDuration
                }
            }
            let stop = copy.stop.plannedLocation
            let to: FleetEngineV1.LatLng? = stop.hasPoint ? stop.point : nil
            if let from, let to {
                let metres = RouteEstimator.distance(from, to)
                copy.drivingDistanceMeters = Google_Protobuf_Int32Value(Int32(clamping: Int64(metres.rounded())))
                copy.drivingDuration = Google_Protobuf_Duration(seconds: Int64((metres / speed).rounded()))
                copy.path = [from, to]
            }
            if let to { from = to }
            return copy
        }
    }

    /// The task changes of new journey segments naming `named`: each named task assigned to `vehicleID`, each OPEN
    /// task of the vehicle no longer named CLOSED.
    static func assign(
        _ named: [String],
        to vehicleID: String,
        tasks: [String: FleetEngineDelivery.Task],
        provider: String
    ) throws -> [String: FleetEngineDelivery.Task] {
        var changed: [String: FleetEngineDelivery.Task] = [:]
        for taskID in named {
            guard var task = tasks[taskID] else {
                throw GoogleAPIError.notFound(
                    "Task \(taskName(provider: provider, id: taskID)) named in remainingVehicleJourneySegments not found."
                )
            }
            guard task.state != .closed else {
                throw GoogleAPIError.failedPrecondition(
                    "Task \(taskID) is CLOSED and cannot be assigned to a vehicle again."
                )
            }
            if !task.deliveryVehicleID.isEmpty, task.deliveryVehicleID != vehicleID {
                throw GoogleAPIError.failedPrecondition(
                    "Task \(taskID) is assigned to delivery vehicle \(task.deliveryVehicleID); remove it from that vehicle's stops first."
                )
            }
            if task.deliveryVehicleID != vehicleID {
                task.deliveryVehicleID = vehicleID
                changed[taskID] = task
            }
        }
        let kept = Set(named)
        for (taskID, task) in tasks where task.deliveryVehicleID == vehicleID && task.state == .open {
            guard !kept.contains(taskID) else { continue }
            var closed = task
            closed.state = .closed
            changed[taskID] = closed
        }
        return changed
    }

    /// ListDeliveryVehicles: in ID order, filtered by attributes (`filter`) and by a `viewport` around the last
    /// location, `totalSize` counting the matches of every page; without the vehicles' journey segments and current
    /// route segment, which Google does not list.
    public func listDeliveryVehicles(_ request: FleetEngineDelivery.ListDeliveryVehiclesRequest, caller: Principal)
        async throws -> FleetEngineDelivery.ListDeliveryVehiclesResponse
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        try AccessPolicy.check(caller, .listDeliveryVehicles, .allDeliveryVehicles, provider: provider)
        // Google: "the default and maximum page size are both 100 vehicles".
        let (size, afterID) = try Paging.page(request, maximumSize: 100)
        let query = try DeliveryVehicleQuery(
            filter: request.filter,
            viewport: request.hasViewport ? request.viewport : nil
        )
        let (vehicles, total) = try await store.deliveryVehicles(
            provider: provider,
            matching: query,
            after: afterID,
            limit: size + 1,
            counting: true
        )
        let page = vehicles.prefix(size)
        var response = FleetEngineDelivery.ListDeliveryVehiclesResponse()
        response.deliveryVehicles = page.map { stored in
            // Google leaves the stops and the current route out of listed vehicles.
            var vehicle = render(stored.vehicle, provider: provider, id: stored.id)
            vehicle.remainingVehicleJourneySegments = []
            vehicle.currentRouteSegment = Data()
            return vehicle
        }
        if vehicles.count > size, let last = page.last {
            response.nextPageToken = Paging.token(after: last.id, of: request)
        }
        response.totalSize = Int64(total ?? 0)
        return response
    }

    /// A delivery vehicle as answered: its name.
    func render(_ stored: FleetEngineDelivery.DeliveryVehicle, provider: String, id: String)
        -> FleetEngineDelivery.DeliveryVehicle
    {
        var vehicle = stored
        vehicle.name = Self.deliveryVehicleName(provider: provider, id: id)
        return vehicle
    }
}
