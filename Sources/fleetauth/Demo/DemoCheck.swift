/// One thing the demo proves about the chain: a sentence and whether it held.
struct DemoCheck: Sendable, Hashable {
    /// What was checked, as printed (`a forged signature is 401, retried once with a new token`).
    let name: String
    let passed: Bool

    init(_ name: String, _ passed: Bool) {
        self.name = name
        self.passed = passed
    }
}
