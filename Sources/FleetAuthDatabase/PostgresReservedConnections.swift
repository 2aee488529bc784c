import NIOConcurrencyHelpers
import NIOCore
package import PostgresNIO

/// A few connections kept out of the pool for one hot caller — the emulator's batched location writes — which
/// leases one per batch, thousands of times a second. PostgresNIO's pool starts a keep-alive timer (a task group, a
/// sleeping task, a cancellation) every time a connection goes back to it; for such a caller that bookkeeping cost
/// more than the pool saved. These connections are opened on first use, at most `capacity` of them, and a caller
/// that finds them all leased is answered nil and uses the pool.
///
/// The pool's keep-alive queries exist for connections that sit idle behind a NAT gateway or a proxy, which may drop
/// them silently. A reserved connection left idle longer than `idleLimit` (the pool's keep-alive interval) is
/// therefore not trusted: it is closed and replaced before use, so no caller waits on a connection that died while
/// idle. One the server closed while it was idle (a restart, an administrator's `pg_terminate_backend`) is replaced
/// the same way — PostgresNIO would never answer a statement written to it — and one that closed under a caller is
/// dropped and opened again next time.
package final class PostgresReservedConnections: Sendable {
    private struct Idle {
        var connection: PostgresConnection
        var since: NIODeadline
    }

    private struct State {
        var idle: [Idle] = []
        /// Connections idle, leased or being opened.
        var open = 0
        var nextID = 0
        var closed = false
    }

    private enum Lease {
        case idle(PostgresConnection)
        /// A connection to open, with this ID; replacing a stale one, closed first.
        case open(id: Int, replacing: PostgresConnection?)
        case none
    }

    private let capacity: Int
    private let idleLimit: TimeAmount
    private let connect: @Sendable (_ id: Int) async throws -> PostgresConnection
    /// The clock idle times are measured on (tests inject theirs).
    private let now: @Sendable () -> NIODeadline
    private let state = NIOLockedValueBox(State())

    /// At most `capacity` connections (none: every caller uses the pool), each opened by `connect`; idle times
    /// measured on `now`.
    package init(
        capacity: Int,
        idleLimit: TimeAmount = .seconds(30),
        now: @escaping @Sendable () -> NIODeadline = { .now() },
        connect: @escaping @Sendable (_ id: Int) async throws -> PostgresConnection
    ) {
        self.capacity = capacity
        self.idleLimit = idleLimit
        self.now = now
        self.connect = connect
    }

    /// How many connections are open (idle or leased) or being opened.
    package var openConnections: Int { state.withLockedValue { $0.open } }

    /// Runs `body` on a reserved connection; nil, without running it, when every one is leased or none is kept.
    package func withConnection<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result? {
        let now = self.now()
        let lease: Lease = state.withLockedValue { state in
            if state.closed { return .none }
            var stale: PostgresConnection?
            if let idle = state.idle.popLast() {
                // PostgresNIO never answers a statement written to a closed connection: never hand one out.
                guard now - idle.since > idleLimit || idle.connection.isClosed else { return .idle(idle.connection) }
                stale = idle.connection
            } else if state.open < capacity {
                state.open += 1
            } else {
                return .none
            }
            state.nextID += 1
            return .open(id: state.nextID, replacing: stale)
        }
        let connection: PostgresConnection
        switch lease {
        case .none:
            return nil
        case .idle(let idle):
            connection = idle
        case .open(let id, let stale):
            try? await stale?.close()
            do {
                connection = try await connect(id)
            } catch {
                state.withLockedValue { $0.open -= 1 }
                throw error
            }
        }
        do {
            let result = try await body(connection)
            await giveBack(connection)
            return result
        } catch {
            await giveBack(connection)
            throw error
        }
    }

    private func giveBack(_ connection: PostgresConnection) async {
        let keep = state.withLockedValue { state in
            guard !state.closed, !connection.isClosed else {
                state.open -= 1
                return false
            }
            state.idle.append(Idle(connection: connection, since: now()))
            return true
        }
        if !keep { try? await connection.close() }
    }

    /// Closes the idle connections and, as they come back, the leased ones; later callers are answered nil.
    package func close() async {
        let idle = state.withLockedValue { state in
            state.closed = true
            defer {
                state.open -= state.idle.count
                state.idle = []
            }
            return state.idle
        }
        for entry in idle { try? await entry.connection.close() }
    }
}
