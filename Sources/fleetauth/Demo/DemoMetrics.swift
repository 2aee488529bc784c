import FleetAuthClient
import FleetAuthCore
import Foundation

/// What the demo's apps did, per app and authorization context: Fleet Engine exchanges by outcome, their
/// latencies, and token fetches. Fed by the clients' exchange callbacks and the providers' events.
final class DemoMetrics: @unchecked Sendable {
    struct Row {
        var requests = 0
        var accepted = 0
        var unauthorized = 0
        var forbidden = 0
        var otherFailures = 0
        var tokenFetches = 0
        var tokenFailures = 0
        var latencies: [Duration] = []
    }

    struct Key: Hashable, Comparable {
        var app: String
        var context: String
        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.app, lhs.context) < (rhs.app, rhs.context) }
    }

    private let lock = NSLock()
    private var rows: [Key: Row] = [:]
    private(set) var updatesSent = 0
    private(set) var updatesAccepted = 0
    private(set) var snapshots = 0
    private(set) var tripsFinished = 0

    private func change<T>(_ body: () -> T) -> T { lock.withLock(body) }

    func exchange(app: String, _ exchange: FleetEngineClient.Exchange) {
        change {
            var row = rows[Key(app: app, context: exchange.context.label), default: Row()]
            row.requests += 1
            row.latencies.append(exchange.latency)
            switch exchange.httpStatus {
            case .some(200..<300): row.accepted += 1
            case .some(401): row.unauthorized += 1
            case .some(403): row.forbidden += 1
            default: row.otherFailures += 1
            }
            rows[Key(app: app, context: exchange.context.label)] = row
        }
    }

    func tokenEvent(app: String, _ event: TokenProviderEvent) {
        change {
            switch event {
            case .fetchSucceeded(let context, _):
                rows[Key(app: app, context: context.label), default: Row()].tokenFetches += 1
            case .fetchFailed(let context, _):
                rows[Key(app: app, context: context.label), default: Row()].tokenFailures += 1
            default: break
            }
        }
    }

    func update(accepted: Bool) {
        change {
            updatesSent += 1
            if accepted { updatesAccepted += 1 }
        }
    }

    func snapshot(finished: Bool) {
        change {
            snapshots += 1
            if finished { tripsFinished += 1 }
        }
    }

    var counters: (sent: Int, accepted: Int, snapshots: Int, finished: Int, fetches: Int) {
        change {
            (updatesSent, updatesAccepted, snapshots, tripsFinished, rows.values.reduce(0) { $0 + $1.tokenFetches })
        }
    }

    func row(app: String, context: AuthorizationContext) -> Row {
        change { rows[Key(app: app, context: context.label)] ?? Row() }
    }

    /// All rows, ordered, and a total row.
    func table() -> [(Key, Row)] {
        change {
            let sorted = rows.sorted { $0.key < $1.key }
            var total = Row()
            for (_, row) in sorted {
                total.requests += row.requests
                total.accepted += row.accepted
                total.unauthorized += row.unauthorized
                total.forbidden += row.forbidden
                total.otherFailures += row.otherFailures
                total.tokenFetches += row.tokenFetches
                total.tokenFailures += row.tokenFailures
                total.latencies += row.latencies
            }
            return sorted.map { ($0.key, $0.value) } + [(Key(app: "total", context: ""), total)]
        }
    }
}

extension AuthorizationContext {
    /// `vehicle v1`, `trip t1`, or `server` for the empty context.
    var label: String { self == AuthorizationContext() ? "server" : description }
}

extension Array where Element == Duration {
    /// The `p`-th percentile (0–100) in milliseconds, nearest rank; `nil` when empty.
    func percentileMilliseconds(_ p: Double) -> Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        let rank = Swift.min(sorted.count - 1, Swift.max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
        let value = sorted[rank].components
        return Double(value.seconds) * 1000 + Double(value.attoseconds) / 1e15
    }
}
