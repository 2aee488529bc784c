import FuzzSupport

@testable import FleetEngineEmulator

/// The AIP-160 filters: any text is a filter or an INVALID_ARGUMENT, for vehicles (attributes only, as a store
/// condition) and for ListTasks (every task field), and a filter evaluates against any values. A 512 KiB stack: the
/// bounded parser needs a fraction of it; the unbounded one it replaced overflowed it within seconds of fuzzing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFilter(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count, stackSize: 512 * 1024) { bytes in
        guard let text = FuzzInput.text(bytes) else { return }
        _ = try? AttributeFilter(text)
        guard let filter = try? AIPFilter(text, fields: DeliveryService.taskFilterFields, describing: "tasks") else {
            return
        }
        _ = filter.matches { field in
            switch field {
            case "attributes.a": .string("b")
            case "delivery_vehicle_id", "tracking_id": .string("EV")
            case "attributes.n": .absent
            default: .number(1)
            }
        }
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_filter_main")
public func fuzzfilterMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzFilter($0, $1) }
}
