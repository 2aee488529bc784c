import Foundation

/// The one place Swift tests wait on the real clock: for an event another process or thread causes (a row
/// committed, a count reached), asked again every `interval`. The limit only stops a hang — it is far above the time
/// any such event takes — and when it passes, the error names what was awaited. No verdict depends on how fast the
/// machine is: a test that needs time to pass advances an injected clock instead.
///
/// `.ci/run` refuses `Task.sleep`, `sleep(`, `usleep` and `Thread.sleep` in tests outside this file (and the Python
/// suites' `Tests/waiting.py`).
public enum Waiting {
    /// How long an event may take before it counts as a hang.
    public static let hangLimit: Duration = .seconds(600)

    /// Returns once `condition` holds; throws ``WaitingError`` naming `what` if it still does not after `limit`.
    public static func until(
        _ what: @autoclosure () -> String,
        every interval: Duration = .milliseconds(10),
        limit: Duration = hangLimit,
        _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw WaitingError("\(what()): not within \(limit)") }
            // A short sleep, not a yield: a spinning task would take one of the pool's threads from other tests.
            try await Task.sleep(for: interval)
        }
    }

    /// Never returns until its task is cancelled: a dependency that hangs.
    public static func forever() async {
        try? await Task.sleep(for: .seconds(86_400 * 365))
    }

    /// Holds the calling thread a moment, so that another thread's work most likely goes first. For tests that cover
    /// two orders of events, where either order is a pass: the hold decides which order is more likely, never the
    /// verdict.
    public static func holdThread(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
    }
}

/// An awaited event did not come before the hang limit; the message names it.
public struct WaitingError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
