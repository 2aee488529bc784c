// DO NOT EDIT. Written by Scripts/generate-protos.sh (Scripts/generate-contract.py) from Protos/.
// swift-format-ignore-file

import SwiftProtobuf

/// The unary RPCs of "maps.fleetengine.delivery.v1.DeliveryService", free of any transport: the service's `Implementation`
/// protocol, each RPC's messages and name, and the visit that hands an implementation's RPCs to a transport.
/// It uses no gRPC type, so it is available wherever SwiftProtobuf is.
public enum Maps_Fleetengine_Delivery_V1_DeliveryServiceRPCs {
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

    /// `DeliveryService/CreateDeliveryVehicle`: its messages and its name.
    public enum CreateDeliveryVehicle: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_CreateDeliveryVehicleRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_DeliveryVehicle
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "CreateDeliveryVehicle")
    }

    /// `DeliveryService/GetDeliveryVehicle`: its messages and its name.
    public enum GetDeliveryVehicle: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_GetDeliveryVehicleRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_DeliveryVehicle
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "GetDeliveryVehicle")
    }

    /// `DeliveryService/DeleteDeliveryVehicle`: its messages and its name.
    public enum DeleteDeliveryVehicle: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_DeleteDeliveryVehicleRequest
        public typealias Output = Google_Protobuf_Empty
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "DeleteDeliveryVehicle")
    }

    /// `DeliveryService/UpdateDeliveryVehicle`: its messages and its name.
    public enum UpdateDeliveryVehicle: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_DeliveryVehicle
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "UpdateDeliveryVehicle")
    }

    /// `DeliveryService/BatchCreateTasks`: its messages and its name.
    public enum BatchCreateTasks: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_BatchCreateTasksRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_BatchCreateTasksResponse
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "BatchCreateTasks")
    }

    /// `DeliveryService/CreateTask`: its messages and its name.
    public enum CreateTask: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_CreateTaskRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_Task
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "CreateTask")
    }

    /// `DeliveryService/GetTask`: its messages and its name.
    public enum GetTask: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_GetTaskRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_Task
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "GetTask")
    }

    /// `DeliveryService/DeleteTask`: its messages and its name.
    public enum DeleteTask: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_DeleteTaskRequest
        public typealias Output = Google_Protobuf_Empty
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "DeleteTask")
    }

    /// `DeliveryService/UpdateTask`: its messages and its name.
    public enum UpdateTask: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_UpdateTaskRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_Task
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "UpdateTask")
    }

    /// `DeliveryService/ListTasks`: its messages and its name.
    public enum ListTasks: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_ListTasksRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_ListTasksResponse
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "ListTasks")
    }

    /// `DeliveryService/GetTaskTrackingInfo`: its messages and its name.
    public enum GetTaskTrackingInfo: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_TaskTrackingInfo
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "GetTaskTrackingInfo")
    }

    /// `DeliveryService/ListDeliveryVehicles`: its messages and its name.
    public enum ListDeliveryVehicles: UnaryMethod {
        public typealias Input = Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesRequest
        public typealias Output = Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesResponse
        public static let rpc = RPCMethod(service: "maps.fleetengine.delivery.v1.DeliveryService", method: "ListDeliveryVehicles")
    }

    /// Hands each unary RPC of "maps.fleetengine.delivery.v1.DeliveryService", answered by `implementation`, to `visitor`, with
    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.
    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.
    @inlinable
    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(
        of implementation: Service,
        _ visitor: inout Visitor
    ) where Visitor.Caller == Service.Caller {
        visitor.visit(CreateDeliveryVehicle.self) { try await implementation.createDeliveryVehicle($0, caller: $1) }
        visitor.visit(GetDeliveryVehicle.self) { try await implementation.getDeliveryVehicle($0, caller: $1) }
        visitor.visit(DeleteDeliveryVehicle.self) { try await implementation.deleteDeliveryVehicle($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(UpdateDeliveryVehicle.self) { try await implementation.updateDeliveryVehicle($0, caller: $1) }
        visitor.visit(BatchCreateTasks.self) { try await implementation.batchCreateTasks($0, caller: $1) }
        visitor.visit(CreateTask.self) { try await implementation.createTask($0, caller: $1) }
        visitor.visit(GetTask.self) { try await implementation.getTask($0, caller: $1) }
        visitor.visit(DeleteTask.self) { try await implementation.deleteTask($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(UpdateTask.self) { try await implementation.updateTask($0, caller: $1) }
        visitor.visit(ListTasks.self) { try await implementation.listTasks($0, caller: $1) }
        visitor.visit(GetTaskTrackingInfo.self) { try await implementation.getTaskTrackingInfo($0, caller: $1) }
        visitor.visit(ListDeliveryVehicles.self) { try await implementation.listDeliveryVehicles($0, caller: $1) }
    }
}

/// The unary RPCs of "maps.fleetengine.v1.TripService", free of any transport: the service's `Implementation`
/// protocol, each RPC's messages and name, and the visit that hands an implementation's RPCs to a transport.
/// It uses no gRPC type, so it is available wherever SwiftProtobuf is.
public enum Maps_Fleetengine_V1_TripServiceRPCs {
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

    /// `TripService/CreateTrip`: its messages and its name.
    public enum CreateTrip: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_CreateTripRequest
        public typealias Output = Maps_Fleetengine_V1_Trip
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.TripService", method: "CreateTrip")
    }

    /// `TripService/GetTrip`: its messages and its name.
    public enum GetTrip: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_GetTripRequest
        public typealias Output = Maps_Fleetengine_V1_Trip
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.TripService", method: "GetTrip")
    }

    /// `TripService/DeleteTrip`: its messages and its name.
    public enum DeleteTrip: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_DeleteTripRequest
        public typealias Output = Google_Protobuf_Empty
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.TripService", method: "DeleteTrip")
    }

    /// `TripService/ReportBillableTrip`: its messages and its name.
    public enum ReportBillableTrip: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_ReportBillableTripRequest
        public typealias Output = Google_Protobuf_Empty
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.TripService", method: "ReportBillableTrip")
    }

    /// `TripService/SearchTrips`: its messages and its name.
    public enum SearchTrips: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_SearchTripsRequest
        public typealias Output = Maps_Fleetengine_V1_SearchTripsResponse
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.TripService", method: "SearchTrips")
    }

    /// `TripService/UpdateTrip`: its messages and its name.
    public enum UpdateTrip: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_UpdateTripRequest
        public typealias Output = Maps_Fleetengine_V1_Trip
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.TripService", method: "UpdateTrip")
    }

    /// Hands each unary RPC of "maps.fleetengine.v1.TripService", answered by `implementation`, to `visitor`, with
    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.
    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.
    @inlinable
    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(
        of implementation: Service,
        _ visitor: inout Visitor
    ) where Visitor.Caller == Service.Caller {
        visitor.visit(CreateTrip.self) { try await implementation.createTrip($0, caller: $1) }
        visitor.visit(GetTrip.self) { try await implementation.getTrip($0, caller: $1) }
        visitor.visit(DeleteTrip.self) { try await implementation.deleteTrip($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(ReportBillableTrip.self) { try await implementation.reportBillableTrip($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(SearchTrips.self) { try await implementation.searchTrips($0, caller: $1) }
        visitor.visit(UpdateTrip.self) { try await implementation.updateTrip($0, caller: $1) }
    }
}

/// The unary RPCs of "maps.fleetengine.v1.VehicleService", free of any transport: the service's `Implementation`
/// protocol, each RPC's messages and name, and the visit that hands an implementation's RPCs to a transport.
/// It uses no gRPC type, so it is available wherever SwiftProtobuf is.
public enum Maps_Fleetengine_V1_VehicleServiceRPCs {
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

    /// `VehicleService/CreateVehicle`: its messages and its name.
    public enum CreateVehicle: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_CreateVehicleRequest
        public typealias Output = Maps_Fleetengine_V1_Vehicle
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.VehicleService", method: "CreateVehicle")
    }

    /// `VehicleService/GetVehicle`: its messages and its name.
    public enum GetVehicle: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_GetVehicleRequest
        public typealias Output = Maps_Fleetengine_V1_Vehicle
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.VehicleService", method: "GetVehicle")
    }

    /// `VehicleService/DeleteVehicle`: its messages and its name.
    public enum DeleteVehicle: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_DeleteVehicleRequest
        public typealias Output = Google_Protobuf_Empty
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.VehicleService", method: "DeleteVehicle")
    }

    /// `VehicleService/UpdateVehicle`: its messages and its name.
    public enum UpdateVehicle: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_UpdateVehicleRequest
        public typealias Output = Maps_Fleetengine_V1_Vehicle
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.VehicleService", method: "UpdateVehicle")
    }

    /// `VehicleService/UpdateVehicleAttributes`: its messages and its name.
    public enum UpdateVehicleAttributes: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_UpdateVehicleAttributesRequest
        public typealias Output = Maps_Fleetengine_V1_UpdateVehicleAttributesResponse
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.VehicleService", method: "UpdateVehicleAttributes")
    }

    /// `VehicleService/ListVehicles`: its messages and its name.
    public enum ListVehicles: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_ListVehiclesRequest
        public typealias Output = Maps_Fleetengine_V1_ListVehiclesResponse
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.VehicleService", method: "ListVehicles")
    }

    /// `VehicleService/SearchVehicles`: its messages and its name.
    public enum SearchVehicles: UnaryMethod {
        public typealias Input = Maps_Fleetengine_V1_SearchVehiclesRequest
        public typealias Output = Maps_Fleetengine_V1_SearchVehiclesResponse
        public static let rpc = RPCMethod(service: "maps.fleetengine.v1.VehicleService", method: "SearchVehicles")
    }

    /// Hands each unary RPC of "maps.fleetengine.v1.VehicleService", answered by `implementation`, to `visitor`, with
    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.
    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.
    @inlinable
    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(
        of implementation: Service,
        _ visitor: inout Visitor
    ) where Visitor.Caller == Service.Caller {
        visitor.visit(CreateVehicle.self) { try await implementation.createVehicle($0, caller: $1) }
        visitor.visit(GetVehicle.self) { try await implementation.getVehicle($0, caller: $1) }
        visitor.visit(DeleteVehicle.self) { try await implementation.deleteVehicle($0, caller: $1); return Google_Protobuf_Empty() }
        visitor.visit(UpdateVehicle.self) { try await implementation.updateVehicle($0, caller: $1) }
        visitor.visit(UpdateVehicleAttributes.self) { try await implementation.updateVehicleAttributes($0, caller: $1) }
        visitor.visit(ListVehicles.self) { try await implementation.listVehicles($0, caller: $1) }
        visitor.visit(SearchVehicles.self) { try await implementation.searchVehicles($0, caller: $1) }
    }
}

/// The unary RPCs of "grpc.health.v1.Health", free of any transport: the service's `Implementation`
/// protocol, each RPC's messages and name, and the visit that hands an implementation's RPCs to a transport.
/// It uses no gRPC type, so it is available wherever SwiftProtobuf is.
public enum Grpc_Health_V1_HealthRPCs {
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

    /// `Health/Check`: its messages and its name.
    public enum Check: UnaryMethod {
        public typealias Input = Grpc_Health_V1_HealthCheckRequest
        public typealias Output = Grpc_Health_V1_HealthCheckResponse
        public static let rpc = RPCMethod(service: "grpc.health.v1.Health", method: "Check")
    }

    /// `Health/List`: its messages and its name.
    public enum List: UnaryMethod {
        public typealias Input = Grpc_Health_V1_HealthListRequest
        public typealias Output = Grpc_Health_V1_HealthListResponse
        public static let rpc = RPCMethod(service: "grpc.health.v1.Health", method: "List")
    }

    /// Hands each unary RPC of "grpc.health.v1.Health", answered by `implementation`, to `visitor`, with
    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.
    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.
    @inlinable
    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(
        of implementation: Service,
        _ visitor: inout Visitor
    ) where Visitor.Caller == Service.Caller {
        visitor.visit(Check.self) { try await implementation.check($0, caller: $1) }
        visitor.visit(List.self) { try await implementation.list($0, caller: $1) }
    }
}
