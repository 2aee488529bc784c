import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import SwiftProtobuf

extension DeliveryService {
    /// GetTaskTrackingInfo: what a consumer may see of the shipment with a tracking ID (<doc:Deliveries>).
    ///
    /// Of the tasks with the tracking ID, the one shown is the OPEN task on a vehicle with the fewest stops to go
    /// (a shipment's pickup before its delivery), else the first OPEN one, else the closed one that ended last (ID
    /// order breaks ties). While it is OPEN on a vehicle, the
    /// answer adds the vehicle's location, the stops before and including the task's (`remainingStopCount`), the
    /// straight-line path through them (`routePolylinePoints`, `remainingDrivingDistanceMeters`) and the arrival and
    /// completion times at the emulator's speed, plus the duration of every task at the stops before — each shown
    /// or left out as the task's `taskTrackingViewConfig` says (shown when the config does not say).
    public func getTaskTrackingInfo(_ request: FleetEngineDelivery.GetTaskTrackingInfoRequest, caller: Principal)
        async throws -> FleetEngineDelivery.TaskTrackingInfo
    {
        let request = try FieldBehaviors.checked(request)
        let (provider, trackingID) = try ResourceName.resource(
            request.name,
            collection: "taskTrackingInfo",
            field: "name"
        )
        try AccessPolicy.checkRole(account: caller.account, method: .getTaskTrackingInfo)
        let tasks = try await store.tasks(provider: provider, trackingID: trackingID)
        try AccessPolicy.check(
            caller,
            .getTaskTrackingInfo,
            .trackingID(trackingID, taskIDs: tasks.map(\.id)),
            provider: provider
        )
        // The vehicles of the open assigned tasks, each read once: the task shown is the one reached first.
        var vehicles: [String: FleetEngineDelivery.DeliveryVehicle] = [:]
        for stored in tasks where stored.task.state == .open && !stored.task.deliveryVehicleID.isEmpty {
            let vehicleID = stored.task.deliveryVehicleID
            if vehicles[vehicleID] == nil,
                let vehicle = try await store.deliveryVehicle(provider: provider, id: vehicleID)
            {
                vehicles[vehicleID] = vehicle
            }
        }
        guard let shown = Self.shownTask(tasks, vehicles: vehicles) else {
            throw GoogleAPIError.notFound("No task has tracking ID \(trackingID).")
        }
        let task = shown.task
        var info = FleetEngineDelivery.TaskTrackingInfo()
        info.name = request.name
        info.trackingID = trackingID
        info.state = task.state
        info.taskOutcome = task.taskOutcome
        if task.hasTaskOutcomeTime { info.taskOutcomeTime = task.taskOutcomeTime }
        if task.hasPlannedLocation { info.plannedLocation = task.plannedLocation }
        if task.hasTargetTimeWindow { info.targetTimeWindow = task.targetTimeWindow }
        info.attributes = task.attributes
        guard task.state == .open, let vehicle = vehicles[task.deliveryVehicleID],
            let progress = progress(of: shown.id, on: vehicle)
        else { return info }
        let config = task.taskTrackingViewConfig
        let visible = { (option: FleetEngineDelivery.TaskTrackingViewConfig.VisibilityOption, has: Bool) in
            Self.isVisible(option, has: has, progress: progress, now: self.now)
        }
        if visible(config.vehicleLocationVisibility, config.hasVehicleLocationVisibility), vehicle.hasLastLocation {
            info.vehicleLocation = vehicle.lastLocation
        }
        if visible(config.routePolylinePointsVisibility, config.hasRoutePolylinePointsVisibility) {
            info.routePolylinePoints = progress.path
        }
        if visible(config.remainingStopCountVisibility, config.hasRemainingStopCountVisibility) {
            info.remainingStopCount = Google_Protobuf_Int32Value(Int32(progress.stops))
        }
        if visible(config.remainingDrivingDistanceVisibility, config.hasRemainingDrivingDistanceVisibility),
            let meters = progress.meters
        {
            info.remainingDrivingDistanceMeters = Google_Protobuf_Int32Value(Int32(clamping: Int(meters.rounded())))
        }
        if visible(config.estimatedArrivalTimeVisibility, config.hasEstimatedArrivalTimeVisibility),
            let arrival = progress.arrival
        {
            info.estimatedArrivalTime = Google_Protobuf_Timestamp(date: arrival)
        }
        if visible(config.estimatedTaskCompletionTimeVisibility, config.hasEstimatedTaskCompletionTimeVisibility),
            let arrival = progress.arrival
        {
            info.estimatedTaskCompletionTime = Google_Protobuf_Timestamp(
                date: arrival.addingTimeInterval(task.taskDuration.timeInterval)
            )
        }
        return info
    }

    /// Which of a tracking ID's tasks a consumer is shown: of the OPEN tasks on a vehicle, the one with the fewest
    /// stops to go; else the first OPEN one; else the one that closed last.
    static func shownTask(_ tasks: [StoredTask], vehicles: [String: FleetEngineDelivery.DeliveryVehicle])
        -> StoredTask?
    {
        func stopsToGo(_ stored: StoredTask) -> Int? {
            guard stored.task.state == .open, let vehicle = vehicles[stored.task.deliveryVehicleID] else { return nil }
            return vehicle.remainingVehicleJourneySegments.firstIndex { segment in
                segment.stop.tasks.contains { $0.taskID == stored.id }
            }
        }
        let onRoute = tasks.compactMap { stored in stopsToGo(stored).map { (stored, $0) } }
        if let next = onRoute.min(by: { $0.1 < $1.1 }) { return next.0 }
        if let open = tasks.first(where: { $0.task.state == .open }) { return open }
        return tasks.max { a, b in
            let (ta, tb) = (a.task.taskOutcomeTime.date, b.task.taskOutcomeTime.date)
            return ta == tb ? a.id > b.id : ta < tb
        }
    }

    /// How far a vehicle is from the stop of a task: stops up to and including it, the straight-line path from the
    /// vehicle through them, its length, and the arrival time.
    struct Progress {
        var stops: Int
        var path: [FleetEngineV1.LatLng]
        var meters: Double?
        var arrival: Date?
    }

    func progress(of taskID: String, on vehicle: FleetEngineDelivery.DeliveryVehicle) -> Progress? {
        let segments = vehicle.remainingVehicleJourneySegments
        guard let last = segments.firstIndex(where: { $0.stop.tasks.contains { $0.taskID == taskID } }) else {
            return nil
        }
        let stops = segments[...last].map(\.stop)
        var path = stops.map(\.plannedLocation.point)
        var meters: Double?
        var arrival: Date?
        if vehicle.hasLastLocation, vehicle.lastLocation.hasLocation {
            path.insert(vehicle.lastLocation.location, at: 0)
            let distance = zip(path, path.dropFirst()).reduce(0) { $0 + RouteEstimator.distance($1.0, $1.1) }
            meters = distance
            // Time at the stops before: each task's duration there.
            let dwell = stops.dropLast().flatMap(\.tasks).reduce(0) { $0 + $1.taskDuration.timeInterval }
            arrival = now.addingTimeInterval(distance / speed + dwell)
        }
        return Progress(stops: stops.count, path: path, meters: meters, arrival: arrival)
    }

    /// Whether a visibility option shows a value (an option that is not set shows it).
    static func isVisible(
        _ option: FleetEngineDelivery.TaskTrackingViewConfig.VisibilityOption,
        has: Bool,
        progress: Progress,
        now: Date
    ) -> Bool {
        guard has, let choice = option.visibilityOption else { return true }
        switch choice {
        case .always(let always): return always
        case .never(let never): return !never
        case .remainingStopCountThreshold(let threshold): return progress.stops <= Int(threshold)
        case .remainingDrivingDistanceMetersThreshold(let threshold):
            guard let meters = progress.meters else { return false }
            return meters <= Double(threshold)
        case .durationUntilEstimatedArrivalTimeThreshold(let threshold):
            guard let arrival = progress.arrival else { return false }
            return arrival.timeIntervalSince(now) <= threshold.timeInterval
        }
    }
}
