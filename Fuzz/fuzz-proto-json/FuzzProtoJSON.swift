import FleetEngineAPI
import FuzzSupport

@testable import FleetEngineEmulator

/// The REST request bodies: any bytes are a Vehicle, a Trip or a SearchVehicles request by the proto3 JSON mapping,
/// or an INVALID_ARGUMENT.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtoJSON(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count) { bytes in
        _ = try? ProtoJSON.decode(bytes, as: FleetEngineV1.Vehicle.self, field: "vehicle")
        _ = try? ProtoJSON.decode(bytes, as: FleetEngineV1.Trip.self, field: "trip")
        _ = try? ProtoJSON.decode(bytes, as: FleetEngineV1.SearchVehiclesRequest.self, field: "request")
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_proto_json_main")
public func fuzzprotojsonMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzProtoJSON($0, $1) }
}
