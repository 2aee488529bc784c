import FleetAuthCore
import FuzzSupport

/// The compact-JWS reader: header, payload and signature of any text, or an error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWS(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count) { bytes in
        guard let text = FuzzInput.text(bytes), let jws = try? CompactJWS(text) else { return }
        precondition(jws.signingInputLength <= jws.compact.utf8.count)
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_jws_main")
public func fuzzjwsMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzJWS($0, $1) }
}
