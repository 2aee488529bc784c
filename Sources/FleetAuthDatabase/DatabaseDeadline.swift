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
/// | answering | ``DatabaseTimeouts/statementLimit`` (default 10 s) | ``Expiry/noAnswer(limit:)``: "did not answer within …" |
/// | not answering (its last call got no answer in time) | ``DatabaseTimeouts/unreachableLimit`` (default 1 s) | ``Expiry/down(limit:_:)``: "is not answering" |
/// | refusing connections (its last call could not reach it) | ``DatabaseTimeouts/unreachableLimit`` | ``Expiry/down(limit:_:)``: "cannot be reached" |
///
/// A database that times out is slow or frozen, not gone: a statement it received may still commit once it
/// answers, so the store says the outcome is unknown (`DEADLINE_EXCEEDED`); one that refuses connections received
/// nothing (`UNAVAILABLE`). When the database goes down, the calls already waiting are held only
/// ``DatabaseTimeouts/unreachableLimit`` longer, not their whole limit. A call that succeeds marks the database
/// answering again, so the first request after an outage waits no longer than the database takes. The servers'
/// stores use ``DatabaseTimeouts/requests``; administration and migrations (a `CREATE DATABASE` queued behind
/// others, a migration waiting for another instance's lock) are not bounded. A call given up on is cancelled.
///
/// The cost per call is one task, one timer on an event loop and one entry in the table of calls in flight (no
/// second task), measured by `fleetauth bench emulator --database` against the unbounded calls.
package final class DatabaseDeadline: Sendable {
    /// The configured limits.
    package typealias Limits = DatabaseTimeouts

    /// How the database last answered.
    package enum State: Sendable, Hashable {
        /// Its last call was answered.
        case answering
        /// Its last call got no answer within its limit: slow, locked or frozen.
        case notAnswering
        /// Its last call could not reach it: connections refused or closed.
        case refusing
    }

    /// The limits; nil for none (administration, tests, migrations: work that may rightly take long).
    package let limits: Limits?
    private let shared = NIOLockedValueBox(Shared())

    /// The state, and the calls in flight: what cuts each one short when the database goes down.
    private struct Shared {
        var state = State.answering
        var nextCall: UInt64 = 0
        var inFlight: [UInt64: @Sendable (State) -> Void] = [:]
    }

    /// Told each change of ``state`` (once per change, not per call): what logs an outage and its end.
    private let onChange: (@Sendable (State) -> Void)?

    package init(_ limits: Limits?, onChange: (@Sendable (State) -> Void)? = nil) {
        self.limits = limits
        self.onChange = onChange
    }

    /// How the database last answered.
    package var state: State { shared.withLockedValue { $0.state } }

    /// How many bounded calls are running or waiting for a connection.
    package var callsInFlight: Int { shared.withLockedValue { $0.inFlight.count } }

    /// Whether the last call failed to reach the database or got no answer.
    package var isUnreachable: Bool { state != .answering }

    /// Records how a call ended: reached the database or not (a refused or closed connection).
    package func note(reached: Bool) {
        note(reached ? .answering : .refusing)
    }

    /// Records the database's state; going down from answering cuts the calls in flight short.
    package func note(_ state: State) {
        let (changed, cut) = shared.withLockedValue { shared -> (Bool, [@Sendable (State) -> Void]) in
            defer { shared.state = state }
            guard shared.state != state else { return (false, []) }
            guard shared.state == .answering else { return (true, []) }
            return (true, Array(shared.inFlight.values))
        }
        for shorten in cut { shorten(state) }
        if changed { onChange?(state) }
    }

    /// What ended a call early.
    package enum Expiry: Error, Sendable {
        /// The database answers other calls, but not this one, within `limit`.
        case noAnswer(limit: Duration)
        /// The database is down (not answering, or refusing connections), and this call got nothing within `limit`.
        case down(limit: Duration, State)
    }

    /// Runs `work` and returns its result, or throws ``Expiry`` when the limit passes first (`work` is then
    /// cancelled; should it still complete, the database counts as reached).
    package func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let limits else { return try await work() }
        let current = state
        let limit = current == .answering ? limits.statementLimit : limits.unreachableLimit
        let outcome: Result<T, any Error> = await awaitHandOff {
            (deliver: @escaping @Sendable (Result<Result<T, any Error>, Never>) -> Void) in
            let answered = NIOLockedValueBox(false)
            let call = NIOLockedValueBox<Task<Void, Never>?>(nil)
            let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                let first = answered.withLockedValue { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { deliver(.success(result)) }
            }
            let expire: @Sendable (Expiry) -> Void = { expiry in
                finish(.failure(expiry))
                call.withLockedValue { $0 }?.cancel()
            }
            let loop = MultiThreadedEventLoopGroup.singleton.any()
            let timer = loop.scheduleTask(in: Self.nanoseconds(limit)) {
                expire(current == .answering ? .noAnswer(limit: limit) : .down(limit: limit, current))
            }
            let shortLimit = limits.unreachableLimit
            let id = shared.withLockedValue { shared in
                defer { shared.nextCall &+= 1 }
                shared.inFlight[shared.nextCall] = { state in
                    loop.scheduleTask(in: Self.nanoseconds(shortLimit)) { expire(.down(limit: shortLimit, state)) }
                }
                return shared.nextCall
            }
            call.withLockedValue { call in
                call = Task {
                    defer {
                        timer.cancel()
                        _ = self.shared.withLockedValue { $0.inFlight.removeValue(forKey: id) }
                    }
                    do {
                        let value = try await work()
                        // Reached, even if too late for its caller: the next calls get the full limit again.
                        self.note(.answering)
                        finish(.success(value))
                    } catch {
                        finish(.failure(error))
                    }
                }
            }
        }
        return try outcome.get()
    }

    private static func nanoseconds(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
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
