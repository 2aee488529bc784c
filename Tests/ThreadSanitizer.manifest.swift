// MARK: - ThreadSanitizer (Tests/ThreadSanitizer.manifest.swift)

// .ci/run appends this file to Package.swift for its ThreadSanitizer step, builds in the same .build as its other
// stages, and puts the manifest back when the step ends. It keeps the libraries and the test targets that step runs —
// the client SDK, the live stack, and the server support (the batches' hand-off) — and leaves out the `fleetauth`
// command (so the binary the other stages run is not rebuilt under them), the benchmarks and the other test targets.
//
// Only FleetAuth's own hand-written Swift targets are instrumented (`-sanitize=thread` as their own compile and link
// flag, not `swift build --sanitize=thread`). Everything else keeps the flags of CI's main build, so SwiftPM reuses
// what that build compiled: the step compiles FleetAuth's own modules and nothing else (about a tenth of a full
// build). What TSan still sees: every access our code makes, and every lock and thread the dependencies take (its
// runtime intercepts pthreads whether or not the caller is instrumented); the Swift concurrency runtime reports its
// hand-offs to TSan either way. What it does not see: races inside a dependency's own code or inside the generated
// message types of FleetEngineAPI (values whose storage SwiftProtobuf's uninstrumented runtime manages), and a
// dependency's hand-off made through a bare atomic in uninstrumented code (NIO's queues hand work across threads
// under locks).
let sanitized: Set<String> = ["FleetAuthClientTests", "FleetAuthStackTests", "FleetAuthServerSupportTests"]
let leftOut: Set<String> = ["fleetauth", "FleetAuthBenchmarks"]
package.targets.removeAll { leftOut.contains($0.name) || ($0.type == .test && !sanitized.contains($0.name)) }
package.products.removeAll { leftOut.contains($0.name) }
// C shims (no Swift code to instrument) and the code protoc generates.
let unsanitized: Set<String> = ["CPKCS11", "CLibcrypto", "FleetEngineAPI"]
for target in package.targets where !unsanitized.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
    target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
}
