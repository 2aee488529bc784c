// DO NOT EDIT. Written by Scripts/generate-protos.sh (Scripts/generate-unary-methods.py) from Protos/.
// swift-format-ignore-file

import GRPCCore
import SwiftProtobuf

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Maps_Fleetengine_Delivery_V1_DeliveryService.StreamingServiceProtocol {
    /// Hands each unary method of "maps.fleetengine.delivery.v1.DeliveryService" to `visitor`, with its types, in the proto's
    /// order: a new method in the proto is visited without any edit beyond its implementation.
    public func visitUnaryMethods(_ visitor: inout some UnaryMethodVisitor) {
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.CreateDeliveryVehicle.self) { request, context in
            try await self.createDeliveryVehicle(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.GetDeliveryVehicle.self) { request, context in
            try await self.getDeliveryVehicle(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.DeleteDeliveryVehicle.self) { request, context in
            try await self.deleteDeliveryVehicle(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.UpdateDeliveryVehicle.self) { request, context in
            try await self.updateDeliveryVehicle(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.BatchCreateTasks.self) { request, context in
            try await self.batchCreateTasks(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.CreateTask.self) { request, context in
            try await self.createTask(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.GetTask.self) { request, context in
            try await self.getTask(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.DeleteTask.self) { request, context in
            try await self.deleteTask(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.UpdateTask.self) { request, context in
            try await self.updateTask(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.ListTasks.self) { request, context in
            try await self.listTasks(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.GetTaskTrackingInfo.self) { request, context in
            try await self.getTaskTrackingInfo(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_Delivery_V1_DeliveryService.Method.ListDeliveryVehicles.self) { request, context in
            try await self.listDeliveryVehicles(request: request, context: context)
        }
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
extension Maps_Fleetengine_V1_TripService.StreamingServiceProtocol {
    /// Hands each unary method of "maps.fleetengine.v1.TripService" to `visitor`, with its types, in the proto's
    /// order: a new method in the proto is visited without any edit beyond its implementation.
    public func visitUnaryMethods(_ visitor: inout some UnaryMethodVisitor) {
        visitor.visit(Maps_Fleetengine_V1_TripService.Method.CreateTrip.self) { request, context in
            try await self.createTrip(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_TripService.Method.GetTrip.self) { request, context in
            try await self.getTrip(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_TripService.Method.DeleteTrip.self) { request, context in
            try await self.deleteTrip(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_TripService.Method.ReportBillableTrip.self) { request, context in
            try await self.reportBillableTrip(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_TripService.Method.SearchTrips.self) { request, context in
            try await self.searchTrips(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_TripService.Method.UpdateTrip.self) { request, context in
            try await self.updateTrip(request: request, context: context)
        }
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
extension Maps_Fleetengine_V1_VehicleService.StreamingServiceProtocol {
    /// Hands each unary method of "maps.fleetengine.v1.VehicleService" to `visitor`, with its types, in the proto's
    /// order: a new method in the proto is visited without any edit beyond its implementation.
    public func visitUnaryMethods(_ visitor: inout some UnaryMethodVisitor) {
        visitor.visit(Maps_Fleetengine_V1_VehicleService.Method.CreateVehicle.self) { request, context in
            try await self.createVehicle(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_VehicleService.Method.GetVehicle.self) { request, context in
            try await self.getVehicle(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_VehicleService.Method.DeleteVehicle.self) { request, context in
            try await self.deleteVehicle(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_VehicleService.Method.UpdateVehicle.self) { request, context in
            try await self.updateVehicle(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_VehicleService.Method.UpdateVehicleAttributes.self) { request, context in
            try await self.updateVehicleAttributes(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_VehicleService.Method.ListVehicles.self) { request, context in
            try await self.listVehicles(request: request, context: context)
        }
        visitor.visit(Maps_Fleetengine_V1_VehicleService.Method.SearchVehicles.self) { request, context in
            try await self.searchVehicles(request: request, context: context)
        }
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
extension Grpc_Health_V1_Health.StreamingServiceProtocol {
    /// Hands each unary method of "grpc.health.v1.Health" to `visitor`, with its types, in the proto's
    /// order: a new method in the proto is visited without any edit beyond its implementation.
    public func visitUnaryMethods(_ visitor: inout some UnaryMethodVisitor) {
        visitor.visit(Grpc_Health_V1_Health.Method.Check.self) { request, context in
            try await self.check(request: request, context: context)
        }
        visitor.visit(Grpc_Health_V1_Health.Method.List.self) { request, context in
            try await self.list(request: request, context: context)
        }
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Grpc_Health_V1_Health.Method.Check: UnaryMethod {}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Grpc_Health_V1_Health.Method.List: UnaryMethod {}
