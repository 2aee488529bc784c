// MARK: - ThreadSanitizer (Tests/ThreadSanitizer.manifest.swift)

// .ci/run appends this file to the Package.swift of the ThreadSanitizer build's copy of the sources (.build-tsan/tree)
// and builds that copy without the OTLPExporter trait (Swift 6.3 rejects swift-otel 1.6.0's source under
// -sanitize=thread: a `sending` diagnostic it raises only then). It keeps the libraries and the test targets that step
// runs — the client SDK, the live stack, and the server support (the batches' hand-off) — and leaves out the
// `fleetauth` command, the benchmarks and the other test targets, so the build compiles what those tests need.
//
// Only FleetAuth's own Swift targets are instrumented (`-sanitize=thread` as their own compile and link flag, not
// `swift build --sanitize=thread`): the packages they use are compiled as usual, which halves the build. What TSan
// still sees: every access our code makes, and every lock and thread the dependencies take (its runtime intercepts
// pthreads whether or not the caller is instrumented); the Swift concurrency runtime reports its hand-offs to TSan in
// both builds. What it no longer sees: races inside a dependency's own code, and a dependency's hand-off made through
// a bare atomic in uninstrumented code (NIO's queues hand work across threads under locks).
let sanitized: Set<String> = ["FleetAuthClientTests", "FleetAuthStackTests", "FleetAuthServerSupportTests"]
let leftOut: Set<String> = ["fleetauth", "FleetAuthBenchmarks"]
package.targets.removeAll { leftOut.contains($0.name) || ($0.type == .test && !sanitized.contains($0.name)) }
package.products.removeAll { leftOut.contains($0.name) }
let unsanitized: Set<String> = ["CPKCS11", "CLibcrypto"]  // C shims: no Swift code to instrument
for target in package.targets where !unsanitized.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
    target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
}
