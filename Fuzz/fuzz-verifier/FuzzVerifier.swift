import FleetAuthCore
import FleetAuthJWT
import Foundation
import FuzzSupport

/// The full token verifier, as the emulator runs it on every bearer token: with a trusted key, any text is a
/// verified token only if that key signed it — which random bytes never are.
let key = try! ServiceAccountKey.generate(projectID: "fuzz-project", name: "fuzz")
let verifier = FleetEngineTokenVerifier(trustStore: TrustStore(serviceAccountKeys: [key]))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVerifier(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    FuzzInput.run(data, count) { bytes in
        guard let text = FuzzInput.text(bytes) else { return }
        if (try? verifier.verify(text, nowSeconds: 1_800_000_000)) != nil {
            preconditionFailure("a token nobody signed was verified")
        }
    }
}

/// The program's entry point, under the name SwiftPM gives an executable's `main`.
@_cdecl("fuzz_verifier_main")
public func fuzzverifierMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzInput.main(argc, argv) { fuzzVerifier($0, $1) }
}
