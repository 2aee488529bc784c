// DO NOT EDIT. Written by Scripts/generate-protos.sh (Scripts/generate-contract.py) from Protos/.
// swift-format-ignore-file

import SwiftProtobuf

extension Maps_Fleetengine_Delivery_V1_DeliveryVehicle {
    /// Sets the top-level field named `field` (proto spelling, such as `last_location`) to `source`'s, as an
    /// update mask naming it does: a message or optional field that `source` leaves unset is cleared. False,
    /// and nothing written, for a name the message does not declare.
    @discardableResult
    public mutating func replaceField(_ field: String, from source: Self) -> Bool {
        switch field {
        case "name": name = source.name
        case "last_location": if source.hasLastLocation { lastLocation = source.lastLocation } else { clearLastLocation() }
        case "past_locations": pastLocations = source.pastLocations
        case "navigation_status": navigationStatus = source.navigationStatus
        case "current_route_segment": currentRouteSegment = source.currentRouteSegment
        case "current_route_segment_end_point": if source.hasCurrentRouteSegmentEndPoint { currentRouteSegmentEndPoint = source.currentRouteSegmentEndPoint } else { clearCurrentRouteSegmentEndPoint() }
        case "remaining_distance_meters": if source.hasRemainingDistanceMeters { remainingDistanceMeters = source.remainingDistanceMeters } else { clearRemainingDistanceMeters() }
        case "remaining_duration": if source.hasRemainingDuration { remainingDuration = source.remainingDuration } else { clearRemainingDuration() }
        case "remaining_vehicle_journey_segments": remainingVehicleJourneySegments = source.remainingVehicleJourneySegments
        case "attributes": attributes = source.attributes
        case "type": type = source.type
        default: return false
        }
        return true
    }
}

extension Maps_Fleetengine_Delivery_V1_Task {
    /// Sets the top-level field named `field` (proto spelling, such as `last_location`) to `source`'s, as an
    /// update mask naming it does: a message or optional field that `source` leaves unset is cleared. False,
    /// and nothing written, for a name the message does not declare.
    @discardableResult
    public mutating func replaceField(_ field: String, from source: Self) -> Bool {
        switch field {
        case "name": name = source.name
        case "type": type = source.type
        case "state": state = source.state
        case "task_outcome": taskOutcome = source.taskOutcome
        case "task_outcome_time": if source.hasTaskOutcomeTime { taskOutcomeTime = source.taskOutcomeTime } else { clearTaskOutcomeTime() }
        case "task_outcome_location": if source.hasTaskOutcomeLocation { taskOutcomeLocation = source.taskOutcomeLocation } else { clearTaskOutcomeLocation() }
        case "task_outcome_location_source": taskOutcomeLocationSource = source.taskOutcomeLocationSource
        case "tracking_id": trackingID = source.trackingID
        case "delivery_vehicle_id": deliveryVehicleID = source.deliveryVehicleID
        case "planned_location": if source.hasPlannedLocation { plannedLocation = source.plannedLocation } else { clearPlannedLocation() }
        case "task_duration": if source.hasTaskDuration { taskDuration = source.taskDuration } else { clearTaskDuration() }
        case "target_time_window": if source.hasTargetTimeWindow { targetTimeWindow = source.targetTimeWindow } else { clearTargetTimeWindow() }
        case "journey_sharing_info": if source.hasJourneySharingInfo { journeySharingInfo = source.journeySharingInfo } else { clearJourneySharingInfo() }
        case "task_tracking_view_config": if source.hasTaskTrackingViewConfig { taskTrackingViewConfig = source.taskTrackingViewConfig } else { clearTaskTrackingViewConfig() }
        case "attributes": attributes = source.attributes
        default: return false
        }
        return true
    }
}

extension Maps_Fleetengine_V1_Trip {
    /// Sets the top-level field named `field` (proto spelling, such as `last_location`) to `source`'s, as an
    /// update mask naming it does: a message or optional field that `source` leaves unset is cleared. False,
    /// and nothing written, for a name the message does not declare.
    @discardableResult
    public mutating func replaceField(_ field: String, from source: Self) -> Bool {
        switch field {
        case "name": name = source.name
        case "vehicle_id": vehicleID = source.vehicleID
        case "trip_status": tripStatus = source.tripStatus
        case "trip_type": tripType = source.tripType
        case "pickup_point": if source.hasPickupPoint { pickupPoint = source.pickupPoint } else { clearPickupPoint() }
        case "actual_pickup_point": if source.hasActualPickupPoint { actualPickupPoint = source.actualPickupPoint } else { clearActualPickupPoint() }
        case "actual_pickup_arrival_point": if source.hasActualPickupArrivalPoint { actualPickupArrivalPoint = source.actualPickupArrivalPoint } else { clearActualPickupArrivalPoint() }
        case "pickup_time": if source.hasPickupTime { pickupTime = source.pickupTime } else { clearPickupTime() }
        case "intermediate_destinations": intermediateDestinations = source.intermediateDestinations
        case "intermediate_destinations_version": if source.hasIntermediateDestinationsVersion { intermediateDestinationsVersion = source.intermediateDestinationsVersion } else { clearIntermediateDestinationsVersion() }
        case "intermediate_destination_index": intermediateDestinationIndex = source.intermediateDestinationIndex
        case "actual_intermediate_destination_arrival_points": actualIntermediateDestinationArrivalPoints = source.actualIntermediateDestinationArrivalPoints
        case "actual_intermediate_destinations": actualIntermediateDestinations = source.actualIntermediateDestinations
        case "dropoff_point": if source.hasDropoffPoint { dropoffPoint = source.dropoffPoint } else { clearDropoffPoint() }
        case "actual_dropoff_point": if source.hasActualDropoffPoint { actualDropoffPoint = source.actualDropoffPoint } else { clearActualDropoffPoint() }
        case "dropoff_time": if source.hasDropoffTime { dropoffTime = source.dropoffTime } else { clearDropoffTime() }
        case "remaining_waypoints": remainingWaypoints = source.remainingWaypoints
        case "vehicle_waypoints": vehicleWaypoints = source.vehicleWaypoints
        case "route": route = source.route
        case "current_route_segment": currentRouteSegment = source.currentRouteSegment
        case "current_route_segment_version": if source.hasCurrentRouteSegmentVersion { currentRouteSegmentVersion = source.currentRouteSegmentVersion } else { clearCurrentRouteSegmentVersion() }
        case "current_route_segment_traffic": if source.hasCurrentRouteSegmentTraffic { currentRouteSegmentTraffic = source.currentRouteSegmentTraffic } else { clearCurrentRouteSegmentTraffic() }
        case "current_route_segment_traffic_version": if source.hasCurrentRouteSegmentTrafficVersion { currentRouteSegmentTrafficVersion = source.currentRouteSegmentTrafficVersion } else { clearCurrentRouteSegmentTrafficVersion() }
        case "current_route_segment_end_point": if source.hasCurrentRouteSegmentEndPoint { currentRouteSegmentEndPoint = source.currentRouteSegmentEndPoint } else { clearCurrentRouteSegmentEndPoint() }
        case "remaining_distance_meters": if source.hasRemainingDistanceMeters { remainingDistanceMeters = source.remainingDistanceMeters } else { clearRemainingDistanceMeters() }
        case "eta_to_first_waypoint": if source.hasEtaToFirstWaypoint { etaToFirstWaypoint = source.etaToFirstWaypoint } else { clearEtaToFirstWaypoint() }
        case "remaining_time_to_first_waypoint": if source.hasRemainingTimeToFirstWaypoint { remainingTimeToFirstWaypoint = source.remainingTimeToFirstWaypoint } else { clearRemainingTimeToFirstWaypoint() }
        case "remaining_waypoints_version": if source.hasRemainingWaypointsVersion { remainingWaypointsVersion = source.remainingWaypointsVersion } else { clearRemainingWaypointsVersion() }
        case "remaining_waypoints_route_version": if source.hasRemainingWaypointsRouteVersion { remainingWaypointsRouteVersion = source.remainingWaypointsRouteVersion } else { clearRemainingWaypointsRouteVersion() }
        case "number_of_passengers": numberOfPassengers = source.numberOfPassengers
        case "last_location": if source.hasLastLocation { lastLocation = source.lastLocation } else { clearLastLocation() }
        case "last_location_snappable": lastLocationSnappable = source.lastLocationSnappable
        case "view": view = source.view
        case "attributes": attributes = source.attributes
        default: return false
        }
        return true
    }
}

extension Maps_Fleetengine_V1_Vehicle {
    /// Sets the top-level field named `field` (proto spelling, such as `last_location`) to `source`'s, as an
    /// update mask naming it does: a message or optional field that `source` leaves unset is cleared. False,
    /// and nothing written, for a name the message does not declare.
    @discardableResult
    public mutating func replaceField(_ field: String, from source: Self) -> Bool {
        switch field {
        case "name": name = source.name
        case "vehicle_state": vehicleState = source.vehicleState
        case "supported_trip_types": supportedTripTypes = source.supportedTripTypes
        case "current_trips": currentTrips = source.currentTrips
        case "last_location": if source.hasLastLocation { lastLocation = source.lastLocation } else { clearLastLocation() }
        case "past_locations": pastLocations = source.pastLocations
        case "maximum_capacity": maximumCapacity = source.maximumCapacity
        case "attributes": attributes = source.attributes
        case "vehicle_type": if source.hasVehicleType { vehicleType = source.vehicleType } else { clearVehicleType() }
        case "license_plate": if source.hasLicensePlate { licensePlate = source.licensePlate } else { clearLicensePlate() }
        case "route": route = source.route
        case "current_route_segment": currentRouteSegment = source.currentRouteSegment
        case "current_route_segment_traffic": if source.hasCurrentRouteSegmentTraffic { currentRouteSegmentTraffic = source.currentRouteSegmentTraffic } else { clearCurrentRouteSegmentTraffic() }
        case "current_route_segment_version": if source.hasCurrentRouteSegmentVersion { currentRouteSegmentVersion = source.currentRouteSegmentVersion } else { clearCurrentRouteSegmentVersion() }
        case "current_route_segment_end_point": if source.hasCurrentRouteSegmentEndPoint { currentRouteSegmentEndPoint = source.currentRouteSegmentEndPoint } else { clearCurrentRouteSegmentEndPoint() }
        case "remaining_distance_meters": if source.hasRemainingDistanceMeters { remainingDistanceMeters = source.remainingDistanceMeters } else { clearRemainingDistanceMeters() }
        case "eta_to_first_waypoint": if source.hasEtaToFirstWaypoint { etaToFirstWaypoint = source.etaToFirstWaypoint } else { clearEtaToFirstWaypoint() }
        case "remaining_time_seconds": if source.hasRemainingTimeSeconds { remainingTimeSeconds = source.remainingTimeSeconds } else { clearRemainingTimeSeconds() }
        case "waypoints": waypoints = source.waypoints
        case "waypoints_version": if source.hasWaypointsVersion { waypointsVersion = source.waypointsVersion } else { clearWaypointsVersion() }
        case "back_to_back_enabled": backToBackEnabled = source.backToBackEnabled
        case "navigation_status": navigationStatus = source.navigationStatus
        case "device_settings": if source.hasDeviceSettings { deviceSettings = source.deviceSettings } else { clearDeviceSettings() }
        default: return false
        }
        return true
    }
}
