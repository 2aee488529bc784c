import FleetAuthServerCore
public import FleetEngineAPI
import Foundation
import SwiftProtobuf

extension DeliveryService {
    /// UpdateTask's fields: besides the annotations' immutable (`type`, `tracking_id`, `planned_location`,
    /// `task_duration`) and output-only ones, `task_outcome_location_source`, which the server sets with the
    /// outcome's location, cannot change.
    static let updatableTask = FieldMasks.Updatable(
        FleetEngineDelivery.Task.self,
        alsoFixed: ["task_outcome_location_source": "set with taskOutcomeLocation"]
    )

    /// The fields ListTasks' `filter` compares.
    static let taskFilterFields: [String: AIPFilter.FieldKind] = [
        "state": .enumeration(["STATE_UNSPECIFIED": 0, "OPEN": 1, "CLOSED": 2]),
        "type": .enumeration(["TYPE_UNSPECIFIED": 0, "PICKUP": 1, "DELIVERY": 2, "SCHEDULED_STOP": 3, "UNAVAILABLE": 4]
        ),
        "task_outcome": .enumeration(["TASK_OUTCOME_UNSPECIFIED": 0, "SUCCEEDED": 1, "FAILED": 2]),
        "delivery_vehicle_id": .string,
        "tracking_id": .string,
        "task_outcome_time": .timestamp,
        "planned_location.point.latitude": .number,
        "planned_location.point.longitude": .number,
    ]

    /// CreateTask: a new OPEN task (<doc:Deliveries>).
    public func createTask(_ request: FleetEngineDelivery.CreateTaskRequest, caller: Principal) async throws
        -> FleetEngineDelivery.Task
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        let id = try ResourceName.id(request.taskID, field: "taskId")
        try AccessPolicy.check(caller, .createTask, .task(id, assignedVehicleID: nil), provider: provider)
        let task = try Self.checkedNewTask(request.task, field: "task")
        try await store.insertTasks([StoredTask(id: id, task: task)], provider: provider)
        return render(task, provider: provider, id: id)
    }

    /// BatchCreateTasks: up to 500 tasks, all created or none; each request's `parent` empty or the batch's, each
    /// `header` empty or the batch's.
    public func batchCreateTasks(_ request: FleetEngineDelivery.BatchCreateTasksRequest, caller: Principal)
        async throws -> FleetEngineDelivery.BatchCreateTasksResponse
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        guard !request.requests.isEmpty else {
            throw GoogleAPIError.invalidArgument("requests must hold at least one CreateTaskRequest.")
        }
        guard request.requests.count <= 500 else {
            throw GoogleAPIError.invalidArgument(
                "requests holds \(request.requests.count) tasks; at most 500 may be created in one batch."
            )
        }
        var ids: [String] = []
        var seen = Set<String>()
        for (index, item) in request.requests.enumerated() {
            guard item.parent.isEmpty || item.parent == request.parent else {
                throw GoogleAPIError.invalidArgument(
                    "requests[\(index)].parent must be empty or \(request.parent), not \"\(item.parent.prefix(200))\"."
                )
            }
            guard !item.hasHeader || !request.hasHeader || item.header == request.header else {
                throw GoogleAPIError.invalidArgument("requests[\(index)].header must be empty or the batch's header.")
            }
            let id = try ResourceName.id(item.taskID, field: "requests[\(index)].taskId")
            guard seen.insert(id).inserted else {
                throw GoogleAPIError.invalidArgument("requests[\(index)].taskId \"\(id)\" appears twice in the batch.")
            }
            ids.append(id)
        }
        try AccessPolicy.check(caller, .batchCreateTasks, .taskBatch(ids), provider: provider)
        var tasks: [StoredTask] = []
        for (index, item) in request.requests.enumerated() {
            tasks.append(
                StoredTask(id: ids[index], task: try Self.checkedNewTask(item.task, field: "requests[\(index)].task"))
            )
        }
        try await store.insertTasks(tasks, provider: provider)
        var response = FleetEngineDelivery.BatchCreateTasksResponse()
        response.tasks = tasks.map { render($0.task, provider: provider, id: $0.id) }
        return response
    }

    /// The rules of a new task: `type`, `state` OPEN, `trackingId` for PICKUP and DELIVERY and never for
    /// UNAVAILABLE and SCHEDULED_STOP, `plannedLocation` except for UNAVAILABLE, `taskDuration`; besides those only
    /// `targetTimeWindow`, `taskTrackingViewConfig` and `attributes` may be set (`name` is ignored).
    static func checkedNewTask(_ given: FleetEngineDelivery.Task, field: String) throws(GoogleAPIError)
        -> FleetEngineDelivery.Task
    {
        var task = given
        task.name = ""
        // `type`, `state` and `taskDuration` are present and known: the annotations' check ran first (FieldBehaviors).
        guard task.state == .open else { throw .invalidArgument("\(field).state must be OPEN.") }
        switch task.type {
        case .pickup, .delivery:
            guard !task.trackingID.isEmpty else {
                throw .invalidArgument(
                    "\(field).trackingId is required for \(task.type == .pickup ? "PICKUP" : "DELIVERY") tasks."
                )
            }
            _ = try ResourceName.id(task.trackingID, field: "\(field).trackingId")
        default:
            guard task.trackingID.isEmpty else {
                throw .invalidArgument("\(field).trackingId must not be set for UNAVAILABLE or SCHEDULED_STOP tasks.")
            }
        }
        if task.type != .unavailable {
            try DeliveryChecks.locationInfo(
                task.plannedLocation,
                has: task.hasPlannedLocation,
                "\(field).plannedLocation"
            )
        }
        try DeliveryChecks.duration(task.taskDuration, "\(field).taskDuration")
        try checkWindow(task, field: field)
        try DeliveryChecks.viewConfig(task.taskTrackingViewConfig, field: "\(field).taskTrackingViewConfig")
        try Attributes.checkKeys(task.attributes, field: "\(field).attributes")
        var rest = task
        rest.type = .unspecified
        rest.state = .unspecified
        rest.trackingID = ""
        rest.clearPlannedLocation()
        rest.clearTaskDuration()
        rest.clearTargetTimeWindow()
        rest.clearTaskTrackingViewConfig()
        rest.attributes = []
        let extra = DeliveryChecks.setFields(rest)
        guard extra.isEmpty else {
            throw .invalidArgument(
                "\(field) may not set \(extra.joined(separator: ", ")) on create (the server sets them, or an update does)."
            )
        }
        return task
    }

    static func checkWindow(_ task: FleetEngineDelivery.Task, field: String) throws(GoogleAPIError) {
        guard task.hasTargetTimeWindow else { return }
        let window = task.targetTimeWindow
        if window.hasStartTime, window.hasEndTime, window.endTime.date < window.startTime.date {
            throw .invalidArgument("\(field).targetTimeWindow.endTime is before its startTime.")
        }
    }

    /// GetTask, with its journey sharing information while it is OPEN on a vehicle.
    public func getTask(_ request: FleetEngineDelivery.GetTaskRequest, caller: Principal) async throws
        -> FleetEngineDelivery.Task
    {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.resource(request.name, collection: "tasks")
        try AccessPolicy.checkRole(account: caller.account, method: .getTask)
        let task = try await store.task(provider: provider, id: id)
        // The claim may be the vehicle's, so the task is read first; a missing task is checked as unassigned.
        try AccessPolicy.check(
            caller,
            .getTask,
            .task(id, assignedVehicleID: task?.assignedVehicleID),
            provider: provider
        )
        guard let task else { throw GoogleAPIError.notFound("Task \(request.name) not found.") }
        var answer = render(task, provider: provider, id: id)
        if task.state == .open, !task.deliveryVehicleID.isEmpty,
            let vehicle = try await store.deliveryVehicle(provider: provider, id: task.deliveryVehicleID)
        {
            var sharing = FleetEngineDelivery.Task.JourneySharingInfo()
            if let last = vehicle.remainingVehicleJourneySegments.firstIndex(where: { segment in
                segment.stop.tasks.contains { $0.taskID == id }
            }) {
                sharing.remainingVehicleJourneySegments = Self.sharedSegments(
                    vehicle.remainingVehicleJourneySegments[...last],
                    of: vehicle
                )
            }
            if vehicle.hasLastLocation { sharing.lastLocation = vehicle.lastLocation }
            answer.journeySharingInfo = sharing
        }
        return answer
    }

    /// The journey segments GetTask shares: each segment's distance, duration and path, never its stop (Google:
    /// a stop's `plannedLocation`, `tasks` and `state` are not populated in GetTask's answer, so one customer does
    /// not see the others' addresses and task IDs). The first segment takes the driver's own remaining distance and
    /// duration when it has reported them.
    static func sharedSegments(
        _ segments: ArraySlice<FleetEngineDelivery.VehicleJourneySegment>,
        of vehicle: FleetEngineDelivery.DeliveryVehicle
    ) -> [FleetEngineDelivery.VehicleJourneySegment] {
        var shared = segments.map { segment in
            var copy = segment
            copy.clearStop()
            return copy
        }
        if !shared.isEmpty {
            if vehicle.hasRemainingDistanceMeters { shared[0].drivingDistanceMeters = vehicle.remainingDistanceMeters }
            if vehicle.hasRemainingDuration { shared[0].drivingDuration = vehicle.remainingDuration }
        }
        return shared
    }

    /// UpdateTask: the fields the mask names. A task's outcome is set once; a CLOSED task never reopens; a task
    /// assigned to a vehicle is closed by removing it from the vehicle's stops, never here.
    public func updateTask(_ request: FleetEngineDelivery.UpdateTaskRequest, caller: Principal) async throws
        -> FleetEngineDelivery.Task
    {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.resource(request.task.name, collection: "tasks", field: "task.name")
        let paths = try FieldMasks.paths(request.updateMask.paths, updating: Self.updatableTask)
        try AccessPolicy.checkRole(account: caller.account, method: .updateTask)
        let given = request.task
        if paths.contains("state"), given.state == .unspecified {
            throw GoogleAPIError.invalidArgument("task.state must be OPEN or CLOSED.")
        }
        if paths.contains("task_outcome_location"), given.hasTaskOutcomeLocation {
            try DeliveryChecks.locationInfo(given.taskOutcomeLocation, has: true, "task.taskOutcomeLocation")
        }
        if paths.contains("target_time_window") { try Self.checkWindow(given, field: "task") }
        if paths.contains("task_tracking_view_config") {
            try DeliveryChecks.viewConfig(given.taskTrackingViewConfig, field: "task.taskTrackingViewConfig")
        }
        if paths.contains("attributes") {
            try Attributes.checkKeys(given.attributes, field: "task.attributes")
        }
        let now = self.now
        let claims = caller.claims
        let account = caller.account
        // An outcome given without its location takes the assigned vehicle's last location, as Fleet Engine fills
        // it (`LAST_VEHICLE_LOCATION`): read beforehand, and used only if the task is still on that vehicle.
        let vehicleLocation = try await lastVehicleLocation(given, paths: paths, provider: provider, id: id)
        let updated = try await store.updateTask(provider: provider, id: id) { current in
            // The claim may be the assigned vehicle's: checked against the task as stored, before any change.
            try AccessPolicy.check(
                account: account,
                claims: claims,
                method: .updateTask,
                scope: .task(id, assignedVehicleID: current.assignedVehicleID),
                provider: provider
            )
            var next = current
            for path in paths {
                switch path {
                case "state":
                    if current.state == .closed, given.state == .open {
                        throw GoogleAPIError.failedPrecondition("Task \(id) is CLOSED; a closed task never reopens.")
                    }
                    if current.state == .open, given.state == .closed, !current.deliveryVehicleID.isEmpty {
                        throw GoogleAPIError.failedPrecondition(
                            "Task \(id) is assigned to delivery vehicle \(current.deliveryVehicleID); close it by removing its stop from the vehicle's remainingVehicleJourneySegments."
                        )
                    }
                case "task_outcome":
                    if current.taskOutcome != .unspecified, given.taskOutcome != current.taskOutcome {
                        throw GoogleAPIError.failedPrecondition(
                            "Task \(id) already has the outcome \(current.taskOutcome == .succeeded ? "SUCCEEDED" : "FAILED"); an outcome is set once."
                        )
                    }
                    if !paths.contains("task_outcome_time"), !next.hasTaskOutcomeTime, given.taskOutcome != .unspecified
                    {
                        next.taskOutcomeTime = Google_Protobuf_Timestamp(date: now)
                    }
                    if let vehicleLocation, vehicleLocation.vehicleID == current.deliveryVehicleID,
                        !current.hasTaskOutcomeLocation
                    {
                        next.taskOutcomeLocation.point = vehicleLocation.location
                        next.taskOutcomeLocationSource = .lastVehicleLocation
                    }
                case "task_outcome_location":
                    next.taskOutcomeLocationSource = given.hasTaskOutcomeLocation ? .provider : .unspecified
                default: break
                }
                next.replaceField(path, from: given)
            }
            return next
        }
        return render(updated, provider: provider, id: id)
    }

    /// DeleteTask: `FAILED_PRECONDITION` while the task is OPEN and assigned to a vehicle.
    public func deleteTask(_ request: FleetEngineDelivery.DeleteTaskRequest, caller: Principal) async throws {
        let request = try FieldBehaviors.checked(request)
        let (provider, id) = try ResourceName.resource(request.name, collection: "tasks")
        try AccessPolicy.checkRole(account: caller.account, method: .deleteTask)
        let task = try await store.task(provider: provider, id: id)
        try AccessPolicy.check(
            caller,
            .deleteTask,
            .task(id, assignedVehicleID: task?.assignedVehicleID),
            provider: provider
        )
        try await store.deleteTask(provider: provider, id: id)
    }

    /// The assigned vehicle's last location, when an UpdateTask sets an outcome without its location.
    private func lastVehicleLocation(
        _ given: FleetEngineDelivery.Task,
        paths: [String],
        provider: String,
        id: String
    ) async throws -> (vehicleID: String, location: FleetEngineV1.LatLng)? {
        guard paths.contains("task_outcome"), !paths.contains("task_outcome_location"),
            given.taskOutcome != .unspecified,
            let stored = try await store.task(provider: provider, id: id), !stored.deliveryVehicleID.isEmpty,
            !stored.hasTaskOutcomeLocation,
            let vehicle = try await store.deliveryVehicle(provider: provider, id: stored.deliveryVehicleID),
            vehicle.hasLastLocation, vehicle.lastLocation.hasLocation
        else { return nil }
        return (stored.deliveryVehicleID, vehicle.lastLocation.location)
    }

    /// ListTasks: in ID order, filtered (<doc:Deliveries>), `totalSize` counting the matches of every page.
    public func listTasks(_ request: FleetEngineDelivery.ListTasksRequest, caller: Principal) async throws
        -> FleetEngineDelivery.ListTasksResponse
    {
        let request = try FieldBehaviors.checked(request)
        let provider = try ResourceName.provider(request.parent)
        try AccessPolicy.check(caller, .listTasks, .allTasks, provider: provider)
        let (size, afterID) = try Paging.page(request)
        let query = try TaskQuery(filter: request.filter)
        let (tasks, total) = try await store.tasks(
            provider: provider,
            matching: query,
            after: afterID,
            limit: size + 1,
            counting: true
        )
        let page = tasks.prefix(size)
        var response = FleetEngineDelivery.ListTasksResponse()
        response.tasks = page.map { render($0.task, provider: provider, id: $0.id) }
        if tasks.count > size, let last = page.last {
            response.nextPageToken = Paging.token(after: last.id, of: request)
        }
        response.totalSize = Int64(total ?? 0)
        return response
    }

    /// A task's value of a filter field.
    static func value(of field: String, in task: FleetEngineDelivery.Task) -> AIPFilter.Value {
        switch field {
        case "state": return .number(Double(task.state.rawValue))
        case "type": return .number(Double(task.type.rawValue))
        case "task_outcome": return .number(Double(task.taskOutcome.rawValue))
        case "delivery_vehicle_id": return .string(task.deliveryVehicleID)
        case "tracking_id": return .string(task.trackingID)
        case "task_outcome_time":
            return task.hasTaskOutcomeTime ? .number(task.taskOutcomeTime.date.timeIntervalSince1970) : .absent
        case "planned_location.point.latitude":
            return task.plannedLocation.hasPoint ? .number(task.plannedLocation.point.latitude) : .absent
        case "planned_location.point.longitude":
            return task.plannedLocation.hasPoint ? .number(task.plannedLocation.point.longitude) : .absent
        default:
            let key = field.dropFirst("attributes.".count)
            guard let attribute = task.attributes.first(where: { $0.key == key }) else { return .absent }
            return attribute.taskAttributeValue.map { .string(DeliveryChecks.string($0)) } ?? .string("")
        }
    }

    /// A task as answered: its name.
    func render(_ stored: FleetEngineDelivery.Task, provider: String, id: String) -> FleetEngineDelivery.Task {
        var task = stored
        task.name = Self.taskName(provider: provider, id: id)
        return task
    }
}
