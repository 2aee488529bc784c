import FleetAuthServerCore
import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// The checks on Deliveries API messages that the proto types alone do not make. Each names the field in Google's
/// REST spelling.
enum DeliveryChecks {
    /// A `LocationInfo` that must have a point (its range is checked with every coordinate, ``FieldBehaviors``).
    static func locationInfo(_ info: FleetEngineDelivery.LocationInfo, has: Bool, _ field: String)
        throws(GoogleAPIError)
    {
        guard has, info.hasPoint else { throw .invalidArgument("\(field).point is required.") }
    }

    /// The fields of `message` that are set, in REST spelling: what a create that allows only some names.
    static func setFields(_ message: some SwiftProtobuf.Message) -> [String] {
        guard let json: [UInt8] = try? message.jsonUTF8Bytes(),
            let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any]
        else { return [] }
        return object.keys.sorted()
    }

    /// A task's view config: each option's `always` and `never`, when chosen, must be true (Google: "This field
    /// cannot be set to false").
    static func viewConfig(_ config: FleetEngineDelivery.TaskTrackingViewConfig, field: String)
        throws(GoogleAPIError)
    {
        let options: [(FleetEngineDelivery.TaskTrackingViewConfig.VisibilityOption, String)] = [
            (config.routePolylinePointsVisibility, "routePolylinePointsVisibility"),
            (config.estimatedArrivalTimeVisibility, "estimatedArrivalTimeVisibility"),
            (config.estimatedTaskCompletionTimeVisibility, "estimatedTaskCompletionTimeVisibility"),
            (config.remainingDrivingDistanceVisibility, "remainingDrivingDistanceVisibility"),
            (config.remainingStopCountVisibility, "remainingStopCountVisibility"),
            (config.vehicleLocationVisibility, "vehicleLocationVisibility"),
        ]
        for (option, name) in options {
            switch option.visibilityOption {
            case .always(false): throw .invalidArgument("\(field).\(name).always cannot be false.")
            case .never(false): throw .invalidArgument("\(field).\(name).never cannot be false.")
            default: break
            }
        }
    }

    static func string(_ value: FleetEngineDelivery.DeliveryVehicleAttribute.OneOf_DeliveryVehicleAttributeValue)
        -> String
    {
        switch value {
        case .stringValue(let text): text
        case .boolValue(let flag): flag ? "true" : "false"
        case .numberValue(let number): Attributes.format(number)
        }
    }

    static func string(_ value: FleetEngineDelivery.TaskAttribute.OneOf_TaskAttributeValue) -> String {
        switch value {
        case .stringValue(let text): text
        case .boolValue(let flag): flag ? "true" : "false"
        case .numberValue(let number): Attributes.format(number)
        }
    }

    /// A duration that must not be negative.
    static func duration(_ duration: Google_Protobuf_Duration, _ field: String) throws(GoogleAPIError) {
        guard duration.seconds >= 0, duration.nanos >= 0 else {
            throw .invalidArgument("\(field) must not be negative.")
        }
    }

    /// The journey segments of an UpdateDeliveryVehicle: each stop with a planned location, a known state and at
    /// least one task; each task ID valid and named once. Returns the task IDs in order.
    static func segments(_ segments: [FleetEngineDelivery.VehicleJourneySegment], field: String)
        throws(GoogleAPIError) -> [String]
    {
        var ids: [String] = []
        var seen = Set<String>()
        for (index, segment) in segments.enumerated() {
            let place = "\(field)[\(index)]"
            guard segment.hasStop else { throw .invalidArgument("\(place).stop is required.") }
            let stop = segment.stop
            try locationInfo(stop.plannedLocation, has: stop.hasPlannedLocation, "\(place).stop.plannedLocation")
            guard stop.state != .unspecified else {
                throw .invalidArgument("\(place).stop.state must be NEW, ENROUTE or ARRIVED.")
            }
            guard !stop.tasks.isEmpty else {
                throw .invalidArgument("\(place).stop.tasks must name at least one task.")
            }
            for (taskIndex, info) in stop.tasks.enumerated() {
                let taskPlace = "\(place).stop.tasks[\(taskIndex)]"
                let id = try ResourceName.id(info.taskID, field: "\(taskPlace).taskId")
                guard seen.insert(id).inserted else {
                    throw .invalidArgument("\(taskPlace).taskId \"\(id)\" appears twice; a task is on one stop only.")
                }
                ids.append(id)
            }
        }
        return ids
    }
}
