import FleetAuthServerSupport
import FleetEngineAPI
import Foundation
import Hummingbird
import SwiftProtobuf

/// The Deliveries API over REST, as Google's transcoding of `maps.fleetengine.delivery.v1` binds it: each route
/// turns its path, query and body into the RPC's request message and calls ``DeliveryService``. Path segments are
/// decoded and checked as ``RESTRoutes`` does.
struct DeliveryRESTRoutes: Sendable {
    let service: DeliveryService
    let maximumBodySize: Int

    func register(on v1: RouterGroup<EmulatorRequestContext>) {
        v1.post("deliveryVehicles") { request, context in
            let vehicle = try await body(request, FleetEngineDelivery.DeliveryVehicle.self, field: "deliveryVehicle")
            var rpc = try Bindings.createDeliveryVehicle.decode(
                request.queryItems,
                as: FleetEngineDelivery.CreateDeliveryVehicleRequest.self
            )
            rpc.parent = try parent(context)
            rpc.deliveryVehicle = vehicle
            return try ProtoJSON.response(
                try await service.createDeliveryVehicle(rpc, caller: context.requirePrincipal())
            )
        }
        v1.get("deliveryVehicles") { request, context in
            var rpc = try Bindings.listDeliveryVehicles.decode(
                request.queryItems,
                as: FleetEngineDelivery.ListDeliveryVehiclesRequest.self
            )
            rpc.parent = try parent(context)
            return try ProtoJSON.response(
                try await service.listDeliveryVehicles(rpc, caller: context.requirePrincipal())
            )
        }
        v1.get("deliveryVehicles/{deliveryVehicle}") { request, context in
            var rpc = try Bindings.empty.decode(
                request.queryItems,
                as: FleetEngineDelivery.GetDeliveryVehicleRequest.self
            )
            rpc.name = try name(context, "deliveryVehicles", "deliveryVehicle")
            return try ProtoJSON.response(try await service.getDeliveryVehicle(rpc, caller: context.requirePrincipal()))
        }
        v1.patch("deliveryVehicles/{deliveryVehicle}") { request, context in
            var vehicle = try await body(request, FleetEngineDelivery.DeliveryVehicle.self, field: "deliveryVehicle")
            let (mask, rest) = RESTRoutes.updateMask(request.queryItems)
            var rpc = try Bindings.empty.decode(rest, as: FleetEngineDelivery.UpdateDeliveryVehicleRequest.self)
            vehicle.name = try name(context, "deliveryVehicles", "deliveryVehicle")
            rpc.deliveryVehicle = vehicle
            if !mask.isEmpty { rpc.updateMask.paths = mask }
            return try ProtoJSON.response(
                try await service.updateDeliveryVehicle(rpc, caller: context.requirePrincipal())
            )
        }
        v1.delete("deliveryVehicles/{deliveryVehicle}") { request, context in
            var rpc = try Bindings.empty.decode(
                request.queryItems,
                as: FleetEngineDelivery.DeleteDeliveryVehicleRequest.self
            )
            rpc.name = try name(context, "deliveryVehicles", "deliveryVehicle")
            try await service.deleteDeliveryVehicle(rpc, caller: context.requirePrincipal())
            return try ProtoJSON.response(Google_Protobuf_Empty())
        }
        v1.post("tasks:batchCreate") { request, context in
            var rpc = try await body(request, FleetEngineDelivery.BatchCreateTasksRequest.self, field: "request")
            rpc.parent = try parent(context)
            return try ProtoJSON.response(try await service.batchCreateTasks(rpc, caller: context.requirePrincipal()))
        }
        v1.post("tasks") { request, context in
            let task = try await body(request, FleetEngineDelivery.Task.self, field: "task")
            var rpc = try Bindings.createTask.decode(request.queryItems, as: FleetEngineDelivery.CreateTaskRequest.self)
            rpc.parent = try parent(context)
            rpc.task = task
            return try ProtoJSON.response(try await service.createTask(rpc, caller: context.requirePrincipal()))
        }
        v1.get("tasks") { request, context in
            var rpc = try Bindings.listTasks.decode(request.queryItems, as: FleetEngineDelivery.ListTasksRequest.self)
            rpc.parent = try parent(context)
            return try ProtoJSON.response(try await service.listTasks(rpc, caller: context.requirePrincipal()))
        }
        v1.get("tasks/{task}") { request, context in
            var rpc = try Bindings.empty.decode(request.queryItems, as: FleetEngineDelivery.GetTaskRequest.self)
            rpc.name = try name(context, "tasks", "task")
            return try ProtoJSON.response(try await service.getTask(rpc, caller: context.requirePrincipal()))
        }
        v1.patch("tasks/{task}") { request, context in
            var task = try await body(request, FleetEngineDelivery.Task.self, field: "task")
            let (mask, rest) = RESTRoutes.updateMask(request.queryItems)
            var rpc = try Bindings.empty.decode(rest, as: FleetEngineDelivery.UpdateTaskRequest.self)
            task.name = try name(context, "tasks", "task")
            rpc.task = task
            if !mask.isEmpty { rpc.updateMask.paths = mask }
            return try ProtoJSON.response(try await service.updateTask(rpc, caller: context.requirePrincipal()))
        }
        v1.delete("tasks/{task}") { request, context in
            var rpc = try Bindings.empty.decode(request.queryItems, as: FleetEngineDelivery.DeleteTaskRequest.self)
            rpc.name = try name(context, "tasks", "task")
            try await service.deleteTask(rpc, caller: context.requirePrincipal())
            return try ProtoJSON.response(Google_Protobuf_Empty())
        }
        v1.get("taskTrackingInfo/{taskTrackingInfo}") { request, context in
            var rpc = try Bindings.empty.decode(
                request.queryItems,
                as: FleetEngineDelivery.GetTaskTrackingInfoRequest.self
            )
            rpc.name = try name(context, "taskTrackingInfo", "taskTrackingInfo")
            return try ProtoJSON.response(
                try await service.getTaskTrackingInfo(rpc, caller: context.requirePrincipal())
            )
        }
    }

    func body<M: SwiftProtobuf.Message>(_ request: Request, _ type: M.Type, field: String) async throws -> M {
        try await ProtoJSON.body(request, limit: maximumBodySize, as: type, field: field)
    }

    func parent(_ context: EmulatorRequestContext) throws(GoogleAPIError) -> String {
        "providers/\(try RESTRoutes.segment(context, "provider"))"
    }

    func name(_ context: EmulatorRequestContext, _ collection: String, _ parameter: String) throws(GoogleAPIError)
        -> String
    {
        "providers/\(try RESTRoutes.segment(context, "provider"))/\(collection)/\(try RESTRoutes.segment(context, parameter))"
    }

    /// The query parameters each method binds (the request header's are added to each).
    enum Bindings {
        static let empty = QueryBinding([:])
        static let createDeliveryVehicle = QueryBinding(["deliveryVehicleId": .string])
        static let listDeliveryVehicles = QueryBinding([
            "pageSize": .number, "pageToken": .string, "filter": .string, "viewport.low.latitude": .number,
            "viewport.low.longitude": .number, "viewport.high.latitude": .number, "viewport.high.longitude": .number,
        ])
        static let createTask = QueryBinding(["taskId": .string])
        static let listTasks = QueryBinding(["pageSize": .number, "pageToken": .string, "filter": .string])
    }
}
