import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import SwiftProtobuf
import Testing

@testable import FleetEngineEmulator

/// `REQUIRED` from the protos' `google.api.field_behavior`, enforced by one check for every RPC of both APIs.
@Suite("Field behaviours: REQUIRED and OUTPUT_ONLY from the annotations")
struct FieldBehaviorsTests {
    struct Empty: Sendable, CustomTestStringConvertible {
        let request: any SwiftProtobuf.Message & Sendable
        /// The first field the request's comment calls "Required.", in REST spelling.
        let first: String
        var testDescription: String { type(of: request).protoMessageName }
    }

    /// Every RPC's request, empty: refused naming its first required field (Google's field comments, in order).
    static let empties: [Empty] = [
        .init(request: FleetEngineV1.CreateVehicleRequest(), first: "parent"),
        .init(request: FleetEngineV1.GetVehicleRequest(), first: "name"),
        .init(request: FleetEngineV1.DeleteVehicleRequest(), first: "name"),
        .init(request: FleetEngineV1.UpdateVehicleRequest(), first: "name"),
        .init(request: FleetEngineV1.UpdateVehicleAttributesRequest(), first: "name"),
        .init(request: FleetEngineV1.ListVehiclesRequest(), first: "parent"),
        .init(request: FleetEngineV1.SearchVehiclesRequest(), first: "parent"),
        .init(request: FleetEngineV1.CreateTripRequest(), first: "parent"),
        .init(request: FleetEngineV1.GetTripRequest(), first: "name"),
        .init(request: FleetEngineV1.DeleteTripRequest(), first: "name"),
        .init(request: FleetEngineV1.ReportBillableTripRequest(), first: "name"),
        .init(request: FleetEngineV1.UpdateTripRequest(), first: "name"),
        .init(request: FleetEngineV1.SearchTripsRequest(), first: "parent"),
        .init(request: FleetEngineDelivery.CreateDeliveryVehicleRequest(), first: "parent"),
        .init(request: FleetEngineDelivery.GetDeliveryVehicleRequest(), first: "name"),
        .init(request: FleetEngineDelivery.DeleteDeliveryVehicleRequest(), first: "name"),
        .init(request: FleetEngineDelivery.ListDeliveryVehiclesRequest(), first: "parent"),
        .init(request: FleetEngineDelivery.UpdateDeliveryVehicleRequest(), first: "deliveryVehicle"),
        .init(request: FleetEngineDelivery.BatchCreateTasksRequest(), first: "parent"),
        .init(request: FleetEngineDelivery.CreateTaskRequest(), first: "parent"),
        .init(request: FleetEngineDelivery.GetTaskRequest(), first: "name"),
        .init(request: FleetEngineDelivery.DeleteTaskRequest(), first: "name"),
        .init(request: FleetEngineDelivery.UpdateTaskRequest(), first: "task"),
        .init(request: FleetEngineDelivery.ListTasksRequest(), first: "parent"),
        .init(request: FleetEngineDelivery.GetTaskTrackingInfoRequest(), first: "name"),
    ]

    static func refusal(_ request: some SwiftProtobuf.Message) -> GoogleAPIError? {
        do {
            _ = try FieldBehaviors.checked(request)
            return nil
        } catch {
            return error
        }
    }

    @Test("every RPC's empty request is INVALID_ARGUMENT naming its first required field", arguments: empties)
    func emptyRequests(_ empty: Empty) {
        let error = Self.refusal(empty.request)
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "\(empty.first) is required.")
    }

    @Test("a request is refused until every required field is set; proto3 defaults count as unset")
    func oneFieldAtATime() throws {
        var list = FleetEngineV1.ListVehiclesRequest()
        list.parent = "providers/p"
        #expect(Self.refusal(list)?.message == "vehicleTypeCategories is required.")
        list.vehicleTypeCategories = [.auto]
        #expect(Self.refusal(list) == nil)

        var search = FleetEngineV1.SearchVehiclesRequest()
        search.parent = "providers/p"
        search.pickupPoint.point.latitude = 37.4
        search.pickupRadiusMeters = 400
        search.count = 10
        #expect(Self.refusal(search)?.message == "minimumCapacity is required.")
        search.minimumCapacity = 1
        search.tripTypes = [.exclusive]
        search.vehicleTypes = [.with { $0.category = .auto }]
        // The enum's zero value (UNKNOWN_VEHICLE_MATCH_ORDER) is no order at all.
        #expect(Self.refusal(search)?.message == "orderBy is required.")
        search.orderBy = .pickupPointEta
        #expect(Self.refusal(search) == nil)
    }

    @Test("messages set inside a request have their required fields checked, with their path")
    func nested() {
        var create = FleetEngineV1.CreateTripRequest()
        create.parent = "providers/p"
        create.tripID = "t1"
        create.trip.tripType = .exclusive
        create.trip.pickupPoint = .init()
        #expect(Self.refusal(create)?.message == "trip.pickupPoint.point is required.")
        create.trip.pickupPoint.point.latitude = 37.4
        #expect(Self.refusal(create) == nil)

        var vehicle = FleetEngineV1.CreateVehicleRequest()
        vehicle.parent = "providers/p"
        vehicle.vehicleID = "v1"
        vehicle.vehicle = .init()
        #expect(Self.refusal(vehicle)?.message == "vehicle.vehicleType is required.")
        vehicle.vehicle.vehicleType.category = .auto
        vehicle.vehicle.licensePlate.lastCharacter = "7"
        #expect(Self.refusal(vehicle)?.message == "vehicle.licensePlate.countryCode is required.")
    }

    @Test(
        "a required number inside a resource may be zero: a traffic stretch from the route's start; its style may not"
    )
    func zeroInsideAResource() throws {
        var update = FleetEngineV1.UpdateVehicleRequest()
        update.name = "providers/p/vehicles/v1"
        update.updateMask.paths = ["current_route_segment_traffic"]
        var stretch = Maps_Fleetengine_V1_VisualTrafficReportPolylineRendering.RoadStretch()
        stretch.lengthMeters = 120
        update.vehicle.currentRouteSegmentTraffic.trafficRendering.roadStretch = [stretch]
        #expect(
            Self.refusal(update)?.message
                == "vehicle.currentRouteSegmentTraffic.trafficRendering.roadStretch[0].style is required."
        )
        update.vehicle.currentRouteSegmentTraffic.trafficRendering.roadStretch[0].style = .trafficJam
        #expect(Self.refusal(update) == nil, "offset_meters 0 is the route's start")
    }

    @Test("an update's resource carries only the masked fields: its own required fields are not asked for")
    func partialResource() {
        var update = FleetEngineV1.UpdateVehicleRequest()
        update.name = "providers/p/vehicles/v1"
        update.updateMask.paths = ["vehicle_state"]
        update.vehicle.vehicleState = .online
        // Vehicle.vehicle_type is required on create; an update leaves it out.
        #expect(Self.refusal(update) == nil)
        update.updateMask.paths = ["waypoints"]
        update.vehicle.waypoints = [.with { $0.tripID = "t1" }, .with { $0.location.point.latitude = 1 }]
        update.vehicle.waypoints[0].location = .init()
        #expect(Self.refusal(update)?.message == "vehicle.waypoints[0].location.point is required.")

        var task = FleetEngineDelivery.UpdateTaskRequest()
        task.task.trackingID = "parcel-1"
        #expect(Self.refusal(task)?.message == "updateMask is required.")
        task.updateMask.paths = ["tracking_id"]
        #expect(Self.refusal(task) == nil)
    }

    @Test("a batch's requests may leave parent to the batch; their other required fields are asked for")
    func batch() {
        var batch = FleetEngineDelivery.BatchCreateTasksRequest()
        batch.parent = "providers/p"
        #expect(Self.refusal(batch)?.message == "requests is required.")
        var item = FleetEngineDelivery.CreateTaskRequest()
        item.taskID = "task-1"
        item.task.type = .pickup
        item.task.state = .open
        item.task.taskDuration.seconds = 60
        batch.requests = [item, item]
        #expect(Self.refusal(batch) == nil)
        batch.requests[1].taskID = ""
        #expect(Self.refusal(batch)?.message == "requests[1].taskId is required.")
        batch.requests[1].taskID = "task-2"
        batch.requests[1].task.type = .unspecified
        #expect(Self.refusal(batch)?.message == "requests[1].task.type is required.")
    }

    @Test("an update mask may not name what the annotations make immutable or output only, nor the name")
    func fixedFields() {
        let trip = FieldBehaviors.fixedFields(of: FleetEngineV1.Trip.self)
        #expect(trip["number_of_passengers"] == "immutable")
        #expect(trip["remaining_waypoints"] == "output only")
        #expect(trip["name"] != nil)
        #expect(trip["vehicle_id"] == nil && trip["trip_status"] == nil)
        let task = FieldBehaviors.fixedFields(of: FleetEngineDelivery.Task.self)
        #expect(
            Set(task.filter { $0.value == "immutable" }.keys)
                == ["type", "tracking_id", "planned_location", "task_duration"]
        )
        #expect(task["journey_sharing_info"] == "output only" && task["state"] == nil)
        #expect(FieldBehaviors.fixedFields(of: FleetEngineV1.Vehicle.self)["current_trips"] == "output only")
        #expect(
            FieldBehaviors.fixedFields(of: FleetEngineDelivery.DeliveryVehicle.self) == ["name": "the resource's name"]
        )
    }

    @Test("each update mask accepts exactly the fields left when the fixed ones are taken from the descriptor")
    func updatableFields() {
        // The fields Google's reference documents for each update (UpdateVehicle, UpdateTrip, UpdateTask,
        // UpdateDeliveryVehicle), in proto spelling.
        #expect(
            FieldMasks.vehicle.fields == [
                "vehicle_state", "supported_trip_types", "last_location", "past_locations", "maximum_capacity",
                "attributes", "vehicle_type", "license_plate", "route", "current_route_segment",
                "current_route_segment_traffic", "current_route_segment_end_point", "remaining_distance_meters",
                "eta_to_first_waypoint", "remaining_time_seconds", "waypoints", "back_to_back_enabled",
                "navigation_status", "device_settings",
            ]
        )
        #expect(FieldMasks.vehicle.fixed["available_capacity"] != nil)
        #expect(
            FieldMasks.trip.inputOnly == [
                "actual_pickup_point", "actual_pickup_arrival_point", "actual_intermediate_destination_arrival_points",
                "actual_intermediate_destinations", "actual_dropoff_point",
            ]
        )
        #expect(
            FieldMasks.trip.fields == [
                "vehicle_id", "trip_status", "trip_type", "pickup_point", "actual_pickup_point",
                "actual_pickup_arrival_point", "intermediate_destinations", "intermediate_destinations_version",
                "intermediate_destination_index", "actual_intermediate_destination_arrival_points",
                "actual_intermediate_destinations", "dropoff_point", "actual_dropoff_point", "vehicle_waypoints",
                "attributes",
            ]
        )
        #expect(
            DeliveryService.updatableTask.fields == [
                "state", "task_outcome", "task_outcome_time", "task_outcome_location", "target_time_window",
                "task_tracking_view_config", "attributes",
            ]
        )
        #expect(
            DeliveryService.updatableVehicle.fields == [
                "last_location", "past_locations", "navigation_status", "current_route_segment",
                "current_route_segment_end_point", "remaining_distance_meters", "remaining_duration",
                "remaining_vehicle_journey_segments", "attributes", "type",
            ]
        )
        #expect(throws: GoogleAPIError.self) {
            try FieldMasks.paths(["waypoints_version"], updating: FieldMasks.vehicle)
        }
        #expect(throws: GoogleAPIError.self) { try FieldMasks.paths(["no_such_field"], updating: FieldMasks.trip) }
        #expect(
            (try? FieldMasks.paths(["lastLocation", "last_location"], updating: FieldMasks.vehicle)) == [
                "last_location"
            ]
        )
    }

    @Test("the generated replaceField writes a masked field as Google does: a message the source leaves unset clears")
    func replaceField() {
        var target = FleetEngineV1.Vehicle()
        target.licensePlate.countryCode = "FR"
        target.maximumCapacity = 4
        target.currentRouteSegment = "old"
        var source = FleetEngineV1.Vehicle()
        source.maximumCapacity = 6
        let license = target.replaceField("license_plate", from: source)
        #expect(license)
        #expect(!target.hasLicensePlate)
        let capacity = target.replaceField("maximum_capacity", from: source)
        #expect(capacity)
        #expect(target.maximumCapacity == 6)
        let segment = target.replaceField("current_route_segment", from: source)
        #expect(segment)
        #expect(target.currentRouteSegment.isEmpty)
        source.licensePlate.lastCharacter = "7"
        target.replaceField("license_plate", from: source)
        #expect(target.licensePlate.lastCharacter == "7" && target.licensePlate.countryCode.isEmpty)
        let before = target
        let camelCase = target.replaceField("lastLocation", from: source)
        #expect(!camelCase)
        #expect(target == before)
    }

    @Test("output-only fields are left out of a request at any depth; everything else is kept, unknown fields too")
    func outputOnlyIgnored() throws {
        var create = FleetEngineV1.CreateVehicleRequest()
        create.parent = "providers/p"
        create.vehicleID = "v1"
        create.vehicle.vehicleType.category = .auto
        create.vehicle.maximumCapacity = 4
        create.vehicle.name = "providers/p/vehicles/other"
        create.vehicle.currentTrips = ["t1"]
        create.vehicle.lastLocation.location.latitude = 37.4
        create.vehicle.lastLocation.serverTime.seconds = 1_700_000_000
        // Field 2047 (not in the proto), varint 1: an unknown field travels on untouched.
        create.vehicle = try FleetEngineV1.Vehicle(
            serializedBytes: try create.vehicle.serializedData() + [0xF8, 0x7F, 0x01]
        )
        let checked = try FieldBehaviors.checked(create)
        var expected = create
        expected.vehicle.name = ""
        expected.vehicle.currentTrips = []
        expected.vehicle.lastLocation.clearServerTime()
        #expect(checked == expected)
        #expect(checked.vehicle.unknownFields.data == Data([0xF8, 0x7F, 0x01]))

        var update = FleetEngineDelivery.UpdateDeliveryVehicleRequest()
        update.deliveryVehicle.name = "providers/p/deliveryVehicles/van"
        update.updateMask.paths = ["remaining_vehicle_journey_segments"]
        var segment = FleetEngineDelivery.VehicleJourneySegment()
        segment.stop.plannedLocation.point.latitude = 1
        segment.drivingDistanceMeters.value = 5_000
        update.deliveryVehicle.remainingVehicleJourneySegments = [segment, segment]
        let stripped = try FieldBehaviors.checked(update)
        #expect(stripped.deliveryVehicle.remainingVehicleJourneySegments.allSatisfy { !$0.hasDrivingDistanceMeters })
        #expect(stripped.deliveryVehicle.remainingVehicleJourneySegments.map(\.stop) == [segment.stop, segment.stop])
        #expect(stripped.deliveryVehicle.name == update.deliveryVehicle.name)

        // Nothing output-only: the very request comes back.
        var list = FleetEngineV1.ListVehiclesRequest()
        list.parent = "providers/p"
        list.vehicleTypeCategories = [.auto, .taxi]
        #expect(try FieldBehaviors.checked(list) == list)
    }

    @Test("CreateTask and CreateDeliveryVehicle refuse output-only fields, as their comments say, in a batch too")
    func outputOnlyRefused() {
        var create = FleetEngineDelivery.CreateTaskRequest()
        create.parent = "providers/p"
        create.taskID = "task-1"
        create.task.type = .delivery
        create.task.state = .open
        create.task.taskDuration.seconds = 60
        create.task.deliveryVehicleID = "van-1"
        #expect(Self.refusal(create)?.message == "task.deliveryVehicleId is output only: it must not be set.")
        var batch = FleetEngineDelivery.BatchCreateTasksRequest()
        batch.parent = "providers/p"
        batch.requests = [create]
        #expect(
            Self.refusal(batch)?.message == "requests[0].task.deliveryVehicleId is output only: it must not be set."
        )
        var vehicle = FleetEngineDelivery.CreateDeliveryVehicleRequest()
        vehicle.parent = "providers/p"
        vehicle.deliveryVehicleID = "van-1"
        vehicle.deliveryVehicle.lastLocation.serverTime.seconds = 1
        #expect(
            Self.refusal(vehicle)?.message
                == "deliveryVehicle.lastLocation.serverTime is output only: it must not be set."
        )
    }

    @Test("enum values and coordinates are checked from the descriptors, at any depth, repeated ones by index")
    func valuesFromTheDescriptors() {
        var update = FleetEngineV1.UpdateVehicleRequest()
        update.name = "providers/p/vehicles/v1"
        update.updateMask.paths = ["last_location", "supported_trip_types"]
        update.vehicle.lastLocation.location.latitude = 37.4
        #expect(Self.refusal(update) == nil)

        update.vehicle.lastLocation.location.latitude = 90.5
        #expect(Self.refusal(update)?.message == "vehicle.lastLocation.location.latitude must be in [-90, 90].")
        update.vehicle.lastLocation.location.latitude = -90
        update.vehicle.lastLocation.rawLocation.longitude = -180.01
        #expect(Self.refusal(update)?.message == "vehicle.lastLocation.rawLocation.longitude must be in [-180, 180].")
        update.vehicle.lastLocation.rawLocation.longitude = 180

        // A number no value of the enum has, as a gRPC client or REST's `enum-encoding=int` may send.
        update.vehicle.supportedTripTypes = [.exclusive, FleetEngineV1.TripType(rawValue: 9)!]
        #expect(Self.refusal(update)?.message == "vehicle.supportedTripTypes[1] has an unknown value (9).")
        update.vehicle.supportedTripTypes = [.exclusive]
        update.vehicle.lastLocation.locationSensor = .fleetEngineLocation
        #expect(
            Self.refusal(update)?.message
                == "vehicle.lastLocation.locationSensor cannot be FLEET_ENGINE_LOCATION: only Fleet Engine sets it."
        )
        update.vehicle.lastLocation.locationSensor = .gps
        #expect(Self.refusal(update) == nil)

        var trip = FleetEngineV1.CreateTripRequest()
        trip.parent = "providers/p"
        trip.tripID = "t1"
        trip.trip.pickupPoint.point.latitude = 1
        var waypoint = FleetEngineV1.TripWaypoint()
        waypoint.pathToWaypoint = [.init(), .with { $0.latitude = -91 }]
        trip.trip.vehicleWaypoints = [waypoint]
        #expect(
            Self.refusal(trip)?.message == "trip.vehicleWaypoints[0].pathToWaypoint[1].latitude must be in [-90, 90]."
        )

        var task = FleetEngineDelivery.UpdateTaskRequest()
        task.task.name = "providers/p/tasks/t1"
        task.updateMask.paths = ["task_outcome"]
        task.task.taskOutcome = FleetEngineDelivery.Task.TaskOutcome(rawValue: 7)!
        #expect(Self.refusal(task)?.message == "task.taskOutcome has an unknown value (7).")
    }
}
