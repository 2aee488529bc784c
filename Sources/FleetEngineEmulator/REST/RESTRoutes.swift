import FleetAuthCore
import FleetAuthServerSupport
import FleetEngineAPI
import Foundation
import Hummingbird
import SwiftProtobuf

/// Fleet Engine's REST API: each route turns its path, query and body into the RPC's request message, as Google's
/// transcoding of the same protos does, and calls ``FleetEngineService``. Path segments are percent-decoded exactly
/// once, then must pass the ID rules, so a decoded `/` is an invalid ID (400), never a path step.
struct RESTRoutes: Sendable {
    let service: FleetEngineService
    let maximumBodySize: Int

    func register(on v1: RouterGroup<EmulatorRequestContext>) {
        // VehicleService
        v1.post("vehicles") { request, context in
            let vehicle = try await body(request, FleetEngineV1.Vehicle.self, field: "vehicle")
            var rpc = try Bindings.createVehicle.decode(request.queryItems, as: FleetEngineV1.CreateVehicleRequest.self)
            rpc.parent = try parent(context)
            rpc.vehicle = vehicle
            return try ProtoJSON.response(try await service.createVehicle(rpc, caller: context.requirePrincipal()))
        }
        v1.get("vehicles") { request, context in
            var rpc = try Bindings.listVehicles.decode(request.queryItems, as: FleetEngineV1.ListVehiclesRequest.self)
            rpc.parent = try parent(context)
            return try ProtoJSON.response(try await service.listVehicles(rpc, caller: context.requirePrincipal()))
        }
        v1.get("vehicles/{vehicle}") { request, context in
            var rpc = try Bindings.getVehicle.decode(request.queryItems, as: FleetEngineV1.GetVehicleRequest.self)
            rpc.name = try name(context, "vehicles", "vehicle")
            return try ProtoJSON.response(try await service.getVehicle(rpc, caller: context.requirePrincipal()))
        }
        v1.put("vehicles/{vehicle}") { request, context in
            let vehicle = try await body(request, FleetEngineV1.Vehicle.self, field: "vehicle")
            let (mask, rest) = Self.updateMask(request.queryItems)
            var rpc = try Bindings.empty.decode(rest, as: FleetEngineV1.UpdateVehicleRequest.self)
            rpc.name = try name(context, "vehicles", "vehicle")
            rpc.vehicle = vehicle
            if !mask.isEmpty { rpc.updateMask.paths = mask }
            return try ProtoJSON.response(try await service.updateVehicle(rpc, caller: context.requirePrincipal()))
        }
        v1.delete("vehicles/{vehicle}") { request, context in
            var rpc = try Bindings.empty.decode(request.queryItems, as: FleetEngineV1.DeleteVehicleRequest.self)
            rpc.name = try name(context, "vehicles", "vehicle")
            try await service.deleteVehicle(rpc, caller: context.requirePrincipal())
            return try ProtoJSON.response(Google_Protobuf_Empty())
        }
        v1.post("vehicles/{vehicle}:updateAttributes") { request, context in
            var rpc = try await body(request, FleetEngineV1.UpdateVehicleAttributesRequest.self, field: "request")
            rpc.name = try name(context, "vehicles", "vehicle")
            return try ProtoJSON.response(
                try await service.updateVehicleAttributes(rpc, caller: context.requirePrincipal())
            )
        }
        v1.post("vehicles:search") { request, context in
            var rpc = try await body(request, FleetEngineV1.SearchVehiclesRequest.self, field: "request")
            rpc.parent = try parent(context)
            return try ProtoJSON.response(try await service.searchVehicles(rpc, caller: context.requirePrincipal()))
        }
        // TripService
        v1.post("trips") { request, context in
            let trip = try await body(request, FleetEngineV1.Trip.self, field: "trip")
            var rpc = try Bindings.createTrip.decode(request.queryItems, as: FleetEngineV1.CreateTripRequest.self)
            rpc.parent = try parent(context)
            rpc.trip = trip
            return try ProtoJSON.response(try await service.createTrip(rpc, caller: context.requirePrincipal()))
        }
        v1.get("trips/{trip}") { request, context in
            var rpc = try Bindings.getTrip.decode(request.queryItems, as: FleetEngineV1.GetTripRequest.self)
            rpc.name = try name(context, "trips", "trip")
            return try ProtoJSON.response(try await service.getTrip(rpc, caller: context.requirePrincipal()))
        }
        v1.put("trips/{trip}") { request, context in
            let trip = try await body(request, FleetEngineV1.Trip.self, field: "trip")
            let (mask, rest) = Self.updateMask(request.queryItems)
            var rpc = try Bindings.empty.decode(rest, as: FleetEngineV1.UpdateTripRequest.self)
            rpc.name = try name(context, "trips", "trip")
            rpc.trip = trip
            if !mask.isEmpty { rpc.updateMask.paths = mask }
            return try ProtoJSON.response(try await service.updateTrip(rpc, caller: context.requirePrincipal()))
        }
        v1.delete("trips/{trip}") { request, context in
            var rpc = try Bindings.empty.decode(request.queryItems, as: FleetEngineV1.DeleteTripRequest.self)
            rpc.name = try name(context, "trips", "trip")
            try await service.deleteTrip(rpc, caller: context.requirePrincipal())
            return try ProtoJSON.response(Google_Protobuf_Empty())
        }
        v1.post("trips:search") { request, context in
            var rpc = try await body(request, FleetEngineV1.SearchTripsRequest.self, field: "request")
            rpc.parent = try parent(context)
            return try ProtoJSON.response(try await service.searchTrips(rpc, caller: context.requirePrincipal()))
        }
        v1.post("billableTrips/{billableTrip}:report") { request, context in
            var rpc = try await body(request, FleetEngineV1.ReportBillableTripRequest.self, field: "request")
            rpc.name = try name(context, "billableTrips", "billableTrip")
            try await service.reportBillableTrip(rpc, caller: context.requirePrincipal())
            return try ProtoJSON.response(Google_Protobuf_Empty())
        }
    }

    func body<M: SwiftProtobuf.Message>(_ request: Request, _ type: M.Type, field: String) async throws -> M {
        try await ProtoJSON.body(request, limit: maximumBodySize, as: type, field: field)
    }

    /// `providers/{provider}` from the path.
    func parent(_ context: EmulatorRequestContext) throws(GoogleAPIError) -> String {
        "providers/\(try Self.segment(context, "provider"))"
    }

    /// `providers/{provider}/{collection}/{id}` from the path.
    func name(_ context: EmulatorRequestContext, _ collection: String, _ parameter: String) throws(GoogleAPIError)
        -> String
    {
        "providers/\(try Self.segment(context, "provider"))/\(collection)/\(try Self.segment(context, parameter))"
    }

    /// One path segment, percent-decoded once and checked against the ID rules.
    static func segment(_ context: EmulatorRequestContext, _ parameter: String) throws(GoogleAPIError) -> String {
        guard let raw = context.parameters.get(parameter), let decoded = RequestText.percentDecoded(raw) else {
            throw .invalidArgument("The \(parameter) in the path is not valid percent-encoding.")
        }
        return try ResourceName.id(decoded, field: parameter == "provider" ? "provider" : "\(parameter) ID")
    }

    /// The paths of the `updateMask` parameters (comma-separated, in either spelling: they are checked by
    /// ``FieldMasks``), and the other parameters.
    static func updateMask(_ items: [(name: String, value: String)]) -> ([String], [(name: String, value: String)]) {
        var paths: [String] = []
        var rest: [(name: String, value: String)] = []
        for item in items {
            if item.name == "updateMask" || item.name == "update_mask" {
                paths += item.value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            } else {
                rest.append(item)
            }
        }
        return (paths, rest)
    }

    /// The query parameters each method binds.
    enum Bindings {
        static let empty = QueryBinding([:])
        static let createVehicle = QueryBinding(["vehicleId": .string])
        static let getVehicle = QueryBinding(["currentRouteSegmentVersion": .string, "waypointsVersion": .string])
        static let listVehicles = QueryBinding([
            "pageSize": .number, "pageToken": .string, "minimumCapacity": .number, "tripTypes": .repeated,
            "maximumStaleness": .string, "vehicleTypeCategories": .repeated, "requiredAttributes": .repeated,
            "requiredOneOfAttributes": .repeated, "requiredOneOfAttributeSets": .repeated, "vehicleState": .number,
            "onTripOnly": .bool, "filter": .string, "viewport.low.latitude": .number,
            "viewport.low.longitude": .number, "viewport.high.latitude": .number, "viewport.high.longitude": .number,
        ])
        static let createTrip = QueryBinding(["tripId": .string])
        static let getTrip = QueryBinding([
            "view": .number, "currentRouteSegmentVersion": .string, "remainingWaypointsVersion": .string,
            "routeFormatType": .number, "currentRouteSegmentTrafficVersion": .string,
            "remainingWaypointsRouteVersion": .string,
        ])
    }
}

extension Request {
    /// The query parameters in order, decoded as HTML forms and Google's front end decode them: `+` is a space, then
    /// percent-escapes are decoded (names too: Google's REST clients send `%24alt` for `$alt`). A parameter that is
    /// not valid percent-encoding is kept as it came, for the binding to refuse by name.
    var queryItems: [(name: String, value: String)] {
        guard let query = uri.query, !query.isEmpty else { return [] }
        func decode(_ part: Substring) -> String {
            let spaced =
                part.utf8.contains(UInt8(ascii: "+")) ? part.replacingOccurrences(of: "+", with: " ") : String(part)
            guard spaced.utf8.contains(UInt8(ascii: "%")) else { return spaced }
            return spaced.removingPercentEncoding ?? spaced
        }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return (decode(pair), "") }
            return (decode(pair[..<equals]), decode(pair[pair.index(after: equals)...]))
        }
    }
}
