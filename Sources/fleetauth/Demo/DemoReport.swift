import FleetAuthClient
import Foundation

/// What the demo prints: a progress line while it runs (rewritten in place on a terminal, every 5 s otherwise),
/// then the table of requests per app and context, and the checks.
struct DemoReport: Sendable {
    let started = ContinuousClock.now

    var isTerminal: Bool { isatty(1) != 0 }

    /// Prints progress once a second until cancelled.
    func run(metrics: DemoMetrics, trips: Int) async {
        var tick = 0
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
            tick += 1
            guard isTerminal || tick % 5 == 0 else { continue }
            let c = metrics.counters
            let elapsed = (ContinuousClock.now - started).components.seconds
            let line = String(
                format:
                    "[%3ds] updates %d sent / %d accepted   trip snapshots %d   trips complete %d/%d   token fetches %d",
                elapsed,
                c.sent,
                c.accepted,
                c.snapshots,
                c.finished,
                trips,
                c.fetches
            )
            if isTerminal {
                print("\r" + line, terminator: "")
                fflush(nil)
            } else {
                say(line)
            }
        }
    }

    /// Ends the progress line.
    func endProgress() {
        if isTerminal { print("") }
    }

    /// The table and the checks; whether every check passed.
    func summary(metrics: DemoMetrics, checks: [DemoCheck]) -> Bool {
        let widths = [-10, -18, 8, 8, 5, 5, 7, 8, 8]
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in
                let padding = String(repeating: " ", count: max(abs(width) - cell.count, 0))
                return width < 0 ? cell + padding : padding + cell
            }.joined(separator: " ")
        }
        say("")
        say(line(["app", "context", "requests", "accepted", "401", "403", "tokens", "p50 ms", "p99 ms"]))
        for (key, row) in metrics.table() {
            if key.app == "total" { say(String(repeating: "-", count: 86)) }
            let p50 = row.latencies.percentileMilliseconds(50).map { String(format: "%.2f", $0) } ?? "-"
            let p99 = row.latencies.percentileMilliseconds(99).map { String(format: "%.2f", $0) } ?? "-"
            say(
                line([
                    key.app, key.context, "\(row.requests)", "\(row.accepted)", "\(row.unauthorized)",
                    "\(row.forbidden)", "\(row.tokenFetches)", p50, p99,
                ])
            )
        }
        let c = metrics.counters
        say("")
        say("Location updates: \(c.sent) sent, \(c.accepted) accepted. Trip snapshots: \(c.snapshots).")
        say("Checks:")
        for check in checks { say("  \(check.passed ? "✔" : "✘") \(check.name)") }
        let failed = checks.filter { !$0.passed }.count
        say(failed == 0 ? "All \(checks.count) checks passed." : "\(failed) of \(checks.count) checks FAILED.")
        return failed == 0
    }
}
