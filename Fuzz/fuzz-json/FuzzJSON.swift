import FleetAuthCore
import FuzzSupport

/// The strict JSON reader every body, header and claim set goes through: any bytes are a value or an error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count) { bytes in
        if let value = try? StrictJSONParser().parse(bytes) {
            // What it read, written and read again, is the same value.
            let again = try? StrictJSONParser().parse(Array(value.jsonText.utf8))
            precondition(again == value, "JSON text does not read back as the value it was written from")
        }
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_json_main")
public func fuzzjsonMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzJSON($0, $1) }
}
