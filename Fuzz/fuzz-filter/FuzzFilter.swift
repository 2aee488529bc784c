import FuzzSupport

@testable import FleetEngineEmulator

/// The SearchVehicles / ListVehicles attribute filter (AIP-160): any text is a filter or an INVALID_ARGUMENT, and a
/// filter evaluates against any attributes. A 512 KiB stack: the bounded parser needs a fraction of it; the
/// unbounded one it replaced overflowed it within seconds of fuzzing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFilter(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count, stackSize: 512 * 1024) { bytes in
        guard let text = FuzzInput.text(bytes), let filter = try? AttributeFilter(text) else { return }
        _ = filter.matches(["a": "b", "class": "EV", "n": "1"])
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_filter_main")
public func fuzzfilterMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzFilter($0, $1) }
}
