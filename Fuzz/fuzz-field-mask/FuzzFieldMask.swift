import FleetEngineAPI
import FuzzSupport

@testable import FleetEngineEmulator

/// The update masks of UpdateVehicle, UpdateTrip, UpdateTask and UpdateDeliveryVehicle: any comma-separated paths
/// are accepted paths or an INVALID_ARGUMENT, and every accepted path is one the generated `replaceField` writes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFieldMask(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count) { bytes in
        guard let text = FuzzInput.text(bytes) else { return }
        let mask = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        if let paths = try? FieldMasks.paths(mask, updating: FieldMasks.vehicle) {
            var vehicle = FleetEngineV1.Vehicle()
            for path in paths { precondition(vehicle.replaceField(path, from: FleetEngineV1.Vehicle()), path) }
        }
        if let paths = try? FieldMasks.paths(mask, updating: FieldMasks.trip) {
            var trip = FleetEngineV1.Trip()
            for path in paths { precondition(trip.replaceField(path, from: FleetEngineV1.Trip()), path) }
        }
        if let paths = try? FieldMasks.paths(mask, updating: DeliveryService.updatableTask) {
            var task = FleetEngineDelivery.Task()
            for path in paths { precondition(task.replaceField(path, from: FleetEngineDelivery.Task()), path) }
        }
        if let paths = try? FieldMasks.paths(mask, updating: DeliveryService.updatableVehicle) {
            var vehicle = FleetEngineDelivery.DeliveryVehicle()
            for path in paths {
                precondition(vehicle.replaceField(path, from: FleetEngineDelivery.DeliveryVehicle()), path)
            }
        }
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_field_mask_main")
public func fuzzfieldmaskMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzFieldMask($0, $1) }
}
