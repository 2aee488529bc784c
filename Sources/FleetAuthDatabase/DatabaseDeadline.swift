import FleetAuthServerCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Bounds every call a store makes to its database, so a request never waits without end: a statement written to a
/// connection the server was closing (PostgresNIO never answers it), or a pool waiting for a connection to a
/// database that is down (it waits as long as the outage lasts, and every request piles up behind it).
///
/// | database | a call waits at most | then |
/// |---|---|---|
/// | answering | ``DatabaseTimeouts/statementLimit`` (default 10 s) | `unavailable`: "did not answer within …" |
/// | known to be unreachable (its last call failed to reach it) | ``DatabaseTimeouts/unreachableLimit`` (default 1 s) | `unavailable`: "cannot be reached" |
///
/// A call that succeeds marks the database reachable again, so the first request after an outage waits no longer
/// than the database takes. The servers' stores use ``DatabaseTimeouts/requests``; administration and migrations (a `CREATE
/// DATABASE` queued behind others, a migration waiting for another instance's lock) are not bounded. A call given up
/// on is cancelled; the caller's error says which case it was, and the server answers 503 with `Retry-After`.
///
/// The cost per call is one task and one timer on an event loop (no second task), measured by
/// `fleetauth bench emulator --database` against the unbounded calls.
package final class DatabaseDeadline: Sendable {
    /// The configured limits.
    package typealias Limits = DatabaseTimeouts

    /// The limits; nil for none (administration, tests, migrations: work that may rightly take long).
    package let limits: Limits?
    private let unreachable = NIOLockedValueBox(false)

    package init(_ limits: Limits?) {
        self.limits = limits
    }

    /// Whether the last call failed to reach the database.
    package var isUnreachable: Bool { unreachable.withLockedValue { $0 } }

    /// Records how a call ended: reached the database or not.
    package func note(reached: Bool) {
        unreachable.withLockedValue { $0 = !reached }
    }

    /// What ended a call early.
    package enum Expiry: Error, Sendable {
        /// The database answers other calls, but not this one, within `limit`.
        case noAnswer(limit: Duration)
        /// The database is known to be unreachable, and no connection came within `limit`.
        case unreachable(limit: Duration)
    }

    /// Runs `work` and returns its result, or throws ``Expiry`` when the limit passes first (`work` is then
    /// cancelled; should it still complete, the database counts as reached).
    package func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let limits else { return try await work() }
        let down = isUnreachable
        let limit = down ? limits.unreachableLimit : limits.statementLimit
        let outcome: Result<T, any Error> = await awaitHandOff {
            (deliver: @escaping @Sendable (Result<Result<T, any Error>, Never>) -> Void) in
            let answered = NIOLockedValueBox(false)
            let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                let first = answered.withLockedValue { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { deliver(.success(result)) }
            }
            let call = NIOLockedValueBox<Task<Void, Never>?>(nil)
            let (seconds, attoseconds) = limit.components
            let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(
                in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            ) {
                finish(.failure(down ? Expiry.unreachable(limit: limit) : Expiry.noAnswer(limit: limit)))
                call.withLockedValue { $0 }?.cancel()
            }
            call.withLockedValue { call in
                call = Task {
                    defer { timer.cancel() }
                    do {
                        let value = try await work()
                        // Reached, even if too late for its caller: the next calls get the full limit again.
                        self.note(reached: true)
                        finish(.success(value))
                    } catch {
                        finish(.failure(error))
                    }
                }
            }
        }
        return try outcome.get()
    }
}

/// How long a server's call to PostgreSQL may wait before it fails with 503 `UNAVAILABLE` (and `Retry-After: 1`):
/// no request waits without end on a database that does not answer, and none piles up behind one that is down.
public struct DatabaseTimeouts: Sendable, Hashable {
    /// How long a call may take while the database answers (a statement, and the wait for a connection).
    public var statementLimit: Duration
    /// How long a call may wait for a connection once the database is known to be unreachable (its last call
    /// could not reach it); the first call that reaches it again restores ``statementLimit``.
    public var unreachableLimit: Duration

    public init(statementLimit: Duration = .seconds(10), unreachableLimit: Duration = .seconds(1)) {
        self.statementLimit = statementLimit
        self.unreachableLimit = unreachableLimit
    }

    /// The servers' default: 10 s, and 1 s while the database is unreachable.
    public static let requests = DatabaseTimeouts()
}
