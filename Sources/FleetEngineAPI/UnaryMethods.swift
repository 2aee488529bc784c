// DO NOT EDIT. Written by Scripts/generate-protos.sh (Scripts/generate-unary-methods.py) from Protos/.
// swift-format-ignore-file

import GRPCCore
import SwiftProtobuf

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService {
    /// Answers every RPC of "maps.fleetengine.delivery.v1.DeliveryService", whichever transport brings it: each RPC is a
    /// function of its request message and the caller. A type conforming to it answers every unary RPC the
    /// proto declares, or does not build.
    public protocol Implementation: Sendable {
        /// Who makes the call, as the transports' shared pipeline authenticated it.
        associatedtype Caller

        /// `DeliveryService/CreateDeliveryVehicle`.
        func createDeliveryVehicle(_ request: Maps_Fleetengine_Delivery_V1_CreateDeliveryVehicleRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_DeliveryVehicle

        /// `DeliveryService/GetDeliveryVehicle`.
        func getDeliveryVehicle(_ request: Maps_Fleetengine_Delivery_V1_GetDeliveryVehicleRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_DeliveryVehicle

        /// `DeliveryService/DeleteDeliveryVehicle`.
        func deleteDeliveryVehicle(_ request: Maps_Fleetengine_Delivery_V1_DeleteDeliveryVehicleRequest, caller: Caller) async throws

        /// `DeliveryService/UpdateDeliveryVehicle`.
        func updateDeliveryVehicle(_ request: Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_DeliveryVehicle

        /// `DeliveryService/BatchCreateTasks`.
        func batchCreateTasks(_ request: Maps_Fleetengine_Delivery_V1_BatchCreateTasksRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_BatchCreateTasksResponse

        /// `DeliveryService/CreateTask`.
        func createTask(_ request: Maps_Fleetengine_Delivery_V1_CreateTaskRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_Task

        /// `DeliveryService/GetTask`.
        func getTask(_ request: Maps_Fleetengine_Delivery_V1_GetTaskRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_Task

        /// `DeliveryService/DeleteTask`.
        func deleteTask(_ request: Maps_Fleetengine_Delivery_V1_DeleteTaskRequest, caller: Caller) async throws

        /// `DeliveryService/UpdateTask`.
        func updateTask(_ request: Maps_Fleetengine_Delivery_V1_UpdateTaskRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_Task

        /// `DeliveryService/ListTasks`.
        func listTasks(_ request: Maps_Fleetengine_Delivery_V1_ListTasksRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_ListTasksResponse

        /// `DeliveryService/GetTaskTrackingInfo`.
        func getTaskTrackingInfo(_ request: Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_TaskTrackingInfo

        /// `DeliveryService/ListDeliveryVehicles`.
        func listDeliveryVehicles(_ request: Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesRequest, caller: Caller) async throws -> Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesResponse
    }

    /// Hands each unary RPC of "maps.fleetengine.delivery.v1.DeliveryService", answered by `implementation`, to `visitor`, with
    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.
    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.
    @inlinable
    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(
        of implementation: Service,
        _ visitor: inout Visitor
    ) where Visitor.Caller == Service.Caller {
        visitor.visit(Method.CreateDeliveryVehicle.self) { try await implementation.createDeliveryVehicle($0, caller: $1) }
        visitor.visit(Method.GetDeliveryVehicle.self) { try await implementation.getDeliveryVehicle($0, caller: $1) }
        visitor.visit(Method.DeleteDeliveryVehicle.self) { try await implementation.deleteDeliveryVehicle($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(Method.UpdateDeliveryVehicle.self) { try await implementation.updateDeliveryVehicle($0, caller: $1) }
        visitor.visit(Method.BatchCreateTasks.self) { try await implementation.batchCreateTasks($0, caller: $1) }
        visitor.visit(Method.CreateTask.self) { try await implementation.createTask($0, caller: $1) }
        visitor.visit(Method.GetTask.self) { try await implementation.getTask($0, caller: $1) }
        visitor.visit(Method.DeleteTask.self) { try await implementation.deleteTask($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(Method.UpdateTask.self) { try await implementation.updateTask($0, caller: $1) }
        visitor.visit(Method.ListTasks.self) { try await implementation.listTasks($0, caller: $1) }
        visitor.visit(Method.GetTaskTrackingInfo.self) { try await implementation.getTaskTrackingInfo($0, caller: $1) }
        visitor.visit(Method.ListDeliveryVehicles.self) { try await implementation.listDeliveryVehicles($0, caller: $1) }
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.CreateDeliveryVehicle: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.GetDeliveryVehicle: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.DeleteDeliveryVehicle: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.UpdateDeliveryVehicle: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.BatchCreateTasks: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.CreateTask: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.GetTask: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.DeleteTask: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.UpdateTask: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.ListTasks: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.GetTaskTrackingInfo: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.Method.ListDeliveryVehicles: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_TripService {
    /// Answers every RPC of "maps.fleetengine.v1.TripService", whichever transport brings it: each RPC is a
    /// function of its request message and the caller. A type conforming to it answers every unary RPC the
    /// proto declares, or does not build.
    public protocol Implementation: Sendable {
        /// Who makes the call, as the transports' shared pipeline authenticated it.
        associatedtype Caller

        /// `TripService/CreateTrip`.
        func createTrip(_ request: Maps_Fleetengine_V1_CreateTripRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_Trip

        /// `TripService/GetTrip`.
        func getTrip(_ request: Maps_Fleetengine_V1_GetTripRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_Trip

        /// `TripService/DeleteTrip`.
        func deleteTrip(_ request: Maps_Fleetengine_V1_DeleteTripRequest, caller: Caller) async throws

        /// `TripService/ReportBillableTrip`.
        func reportBillableTrip(_ request: Maps_Fleetengine_V1_ReportBillableTripRequest, caller: Caller) async throws

        /// `TripService/SearchTrips`.
        func searchTrips(_ request: Maps_Fleetengine_V1_SearchTripsRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_SearchTripsResponse

        /// `TripService/UpdateTrip`.
        func updateTrip(_ request: Maps_Fleetengine_V1_UpdateTripRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_Trip
    }

    /// Hands each unary RPC of "maps.fleetengine.v1.TripService", answered by `implementation`, to `visitor`, with
    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.
    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.
    @inlinable
    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(
        of implementation: Service,
        _ visitor: inout Visitor
    ) where Visitor.Caller == Service.Caller {
        visitor.visit(Method.CreateTrip.self) { try await implementation.createTrip($0, caller: $1) }
        visitor.visit(Method.GetTrip.self) { try await implementation.getTrip($0, caller: $1) }
        visitor.visit(Method.DeleteTrip.self) { try await implementation.deleteTrip($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(Method.ReportBillableTrip.self) { try await implementation.reportBillableTrip($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(Method.SearchTrips.self) { try await implementation.searchTrips($0, caller: $1) }
        visitor.visit(Method.UpdateTrip.self) { try await implementation.updateTrip($0, caller: $1) }
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_TripService.Method.CreateTrip: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_TripService.Method.GetTrip: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_TripService.Method.DeleteTrip: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_TripService.Method.ReportBillableTrip: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_TripService.Method.SearchTrips: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_TripService.Method.UpdateTrip: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_VehicleService {
    /// Answers every RPC of "maps.fleetengine.v1.VehicleService", whichever transport brings it: each RPC is a
    /// function of its request message and the caller. A type conforming to it answers every unary RPC the
    /// proto declares, or does not build.
    public protocol Implementation: Sendable {
        /// Who makes the call, as the transports' shared pipeline authenticated it.
        associatedtype Caller

        /// `VehicleService/CreateVehicle`.
        func createVehicle(_ request: Maps_Fleetengine_V1_CreateVehicleRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_Vehicle

        /// `VehicleService/GetVehicle`.
        func getVehicle(_ request: Maps_Fleetengine_V1_GetVehicleRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_Vehicle

        /// `VehicleService/DeleteVehicle`.
        func deleteVehicle(_ request: Maps_Fleetengine_V1_DeleteVehicleRequest, caller: Caller) async throws

        /// `VehicleService/UpdateVehicle`.
        func updateVehicle(_ request: Maps_Fleetengine_V1_UpdateVehicleRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_Vehicle

        /// `VehicleService/UpdateVehicleAttributes`.
        func updateVehicleAttributes(_ request: Maps_Fleetengine_V1_UpdateVehicleAttributesRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_UpdateVehicleAttributesResponse

        /// `VehicleService/ListVehicles`.
        func listVehicles(_ request: Maps_Fleetengine_V1_ListVehiclesRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_ListVehiclesResponse

        /// `VehicleService/SearchVehicles`.
        func searchVehicles(_ request: Maps_Fleetengine_V1_SearchVehiclesRequest, caller: Caller) async throws -> Maps_Fleetengine_V1_SearchVehiclesResponse
    }

    /// Hands each unary RPC of "maps.fleetengine.v1.VehicleService", answered by `implementation`, to `visitor`, with
    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.
    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.
    @inlinable
    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(
        of implementation: Service,
        _ visitor: inout Visitor
    ) where Visitor.Caller == Service.Caller {
        visitor.visit(Method.CreateVehicle.self) { try await implementation.createVehicle($0, caller: $1) }
        visitor.visit(Method.GetVehicle.self) { try await implementation.getVehicle($0, caller: $1) }
        visitor.visit(Method.DeleteVehicle.self) { try await implementation.deleteVehicle($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(Method.UpdateVehicle.self) { try await implementation.updateVehicle($0, caller: $1) }
        visitor.visit(Method.UpdateVehicleAttributes.self) { try await implementation.updateVehicleAttributes($0, caller: $1) }
        visitor.visit(Method.ListVehicles.self) { try await implementation.listVehicles($0, caller: $1) }
        visitor.visit(Method.SearchVehicles.self) { try await implementation.searchVehicles($0, caller: $1) }
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_VehicleService.Method.CreateVehicle: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_VehicleService.Method.GetVehicle: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_VehicleService.Method.DeleteVehicle: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_VehicleService.Method.UpdateVehicle: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_VehicleService.Method.UpdateVehicleAttributes: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_VehicleService.Method.ListVehicles: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_V1_VehicleService.Method.SearchVehicles: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Grpc_Health_V1_Health {
    /// Answers every RPC of "grpc.health.v1.Health", whichever transport brings it: each RPC is a
    /// function of its request message and the caller. A type conforming to it answers every unary RPC the
    /// proto declares, or does not build.
    public protocol Implementation: Sendable {
        /// Who makes the call, as the transports' shared pipeline authenticated it.
        associatedtype Caller

        /// `Health/Check`.
        func check(_ request: Grpc_Health_V1_HealthCheckRequest, caller: Caller) async throws -> Grpc_Health_V1_HealthCheckResponse

        /// `Health/List`.
        func list(_ request: Grpc_Health_V1_HealthListRequest, caller: Caller) async throws -> Grpc_Health_V1_HealthListResponse
    }

    /// Hands each unary RPC of "grpc.health.v1.Health", answered by `implementation`, to `visitor`, with
    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.
    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.
    @inlinable
    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(
        of implementation: Service,
        _ visitor: inout Visitor
    ) where Visitor.Caller == Service.Caller {
        visitor.visit(Method.Check.self) { try await implementation.check($0, caller: $1) }
        visitor.visit(Method.List.self) { try await implementation.list($0, caller: $1) }
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Grpc_Health_V1_Health.Method.Check: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Grpc_Health_V1_Health.Method.List: UnaryMethod {}
