// MARK: - ThreadSanitizer (Tests/ThreadSanitizer.manifest.swift)

// .ci/run appends this file to the Package.swift of the ThreadSanitizer build's copy of the sources (.build-tsan/tree)
// and builds that copy without the OTLPExporter trait (Swift 6.3 rejects swift-otel 1.6.0's source under
// -sanitize=thread: a `sending` diagnostic it raises only then). It keeps the libraries and the test targets that step
// runs — the client SDK, the live stack, and the server support (the batches' hand-off) — and leaves out the
// `fleetauth` command, the benchmarks and the other test targets, so the build compiles what those tests need.
let sanitized: Set<String> = ["FleetAuthClientTests", "FleetAuthStackTests", "FleetAuthServerSupportTests"]
let leftOut: Set<String> = ["fleetauth", "FleetAuthBenchmarks"]
package.targets.removeAll { leftOut.contains($0.name) || ($0.type == .test && !sanitized.contains($0.name)) }
package.products.removeAll { leftOut.contains($0.name) }
