import FleetEngineAPI
import FuzzSupport

@testable import FleetEngineEmulator

/// UpdateVehicle's and UpdateTrip's update masks: any comma-separated paths are accepted paths or an
/// INVALID_ARGUMENT, and writing the accepted ones never traps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFieldMask(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count) { bytes in
        guard let text = FuzzInput.text(bytes) else { return }
        let mask = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        if let paths = try? FieldMasks.paths(
            mask,
            updatable: FieldMasks.vehicleUpdatable,
            fixed: FieldMasks.vehicleFixed,
            message: "Vehicle"
        ) {
            var vehicle = FleetEngineV1.Vehicle()
            for path in paths { FieldMasks.write(path, from: FleetEngineV1.Vehicle(), to: &vehicle) }
        }
        if let paths = try? FieldMasks.paths(
            mask,
            updatable: FieldMasks.tripUpdatable,
            fixed: FieldMasks.tripFixed,
            message: "Trip"
        ) {
            var trip = FleetEngineV1.Trip()
            for path in paths { FieldMasks.write(path, from: FleetEngineV1.Trip(), to: &trip) }
        }
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_field_mask_main")
public func fuzzfieldmaskMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzFieldMask($0, $1) }
}
