// MARK: - Fuzzing (Fuzz/Package.fuzz.swift)

// Scripts/fuzz.sh builds the fuzz targets in a package of its own (.build-fuzz/package): this file appended to
// FleetAuth's Package.swift, beside links to Sources and Fuzz. It adds the libFuzzer targets for the readers of
// attacker input and instruments the modules under test for coverage. FleetAuth's own manifest never declares them:
// `-sanitize=fuzzer` is an unsafe flag, and SwiftPM refuses a package whose products' targets carry one (whatever the
// trait or condition) when an app depends on it by URL.
let instrumented: Set<String> = [
    "FleetAuthCore", "FleetAuthJWT", "FleetAuthServerCore", "FleetAuthServerSupport", "FleetEngineEmulator",
]
for target in package.targets where instrumented.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer"])]
}
package.targets.removeAll { $0.type == .test }
package.targets.append(.target(name: "CFuzzDriver", path: "Fuzz/CFuzzDriver"))
package.targets.append(
    .target(
        name: "FuzzSupport",
        dependencies: ["CFuzzDriver"],
        path: "Fuzz/FuzzSupport",
        swiftSettings: swiftSettings
    )
)
let fuzzTargets: [(String, [Target.Dependency])] = [
    ("fuzz-json", ["FleetAuthCore"]),
    ("fuzz-jws", ["FleetAuthCore"]),
    ("fuzz-verifier", ["FleetAuthCore", "FleetAuthJWT"]),
    ("fuzz-proto-json", ["FleetEngineEmulator", "FleetEngineAPI"]),
    ("fuzz-filter", ["FleetEngineEmulator"]),
    ("fuzz-field-mask", ["FleetEngineEmulator", "FleetEngineAPI"]),
    ("fuzz-query", ["FleetEngineEmulator", "FleetEngineAPI"]),
    ("fuzz-log-filter", ["FleetEngineEmulator", "FleetAuthCore"]),
]
for (name, dependencies) in fuzzTargets {
    package.targets.append(
        .executableTarget(
            name: name,
            dependencies: dependencies + ["FuzzSupport"],
            path: "Fuzz/\(name)",
            swiftSettings: swiftSettings + [.unsafeFlags(["-sanitize=fuzzer", "-parse-as-library"])],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer"])]
        )
    )
    package.products.append(.executable(name: name, targets: [name]))
}
