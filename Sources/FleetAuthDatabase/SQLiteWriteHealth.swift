import FleetAuthServerCore
import GRDB
package import Logging
import NIOConcurrencyHelpers

/// Whether a SQLite database can be written: a full disk (or one that fails writes) is not a bug of the request
/// that met it, but a state of the server. Each write reports its outcome here; the state is what `/readyz` says of
/// the store, and a change of state is logged once (not once per request):
///
/// - a write that fails because the disk is full or fails to write makes the store *failing*, and the write's caller
///   gets ``StoreError/unavailable(_:)`` (503 `UNAVAILABLE` with Google's error body) naming the cause;
/// - the next write that succeeds makes it *ok* again.
///
/// SQLite keeps the database whole through such failures (the transaction is rolled back), so nothing acknowledged
/// is lost, and writes resume by themselves once there is room.
///
/// A database whose file was deleted or replaced (``lost(_:)``) is *lost*: no write is acknowledged again, since
/// none would outlive the process, until the server is restarted.
package final class SQLiteWriteHealth: Sendable {
    private let state = NIOLockedValueBox<String?>(nil)
    private let lostState = NIOLockedValueBox<String?>(nil)
    private let label: String
    /// nil: a logger made when a line is logged, so it uses the logging system the server bootstrapped.
    private let log = NIOLockedValueBox<Logger?>(nil)

    /// `label` names the database in the log (`the emulator's database`).
    package init(label: String) {
        self.label = label
    }

    /// Logs the changes of state to `logger` rather than to `fleetauth.store`.
    package func logging(to logger: Logger) {
        log.withLockedValue { $0 = logger }
    }

    /// What keeps the database from being written, or nil when writes succeed.
    package var problem: String? { lostState.withLockedValue { $0 } ?? state.withLockedValue { $0 } }

    /// The answer to every write once the database's file is gone, or nil while it is there.
    package var lostFile: String? { lostState.withLockedValue { $0 } }

    /// The database's file was deleted or replaced (`change` says which): from now on the store is lost. Logs the
    /// first time and returns the message every write is refused with.
    package func lost(_ change: String) -> String {
        let message =
            "\(label) cannot be written: \(change) while the server had it open, so nothing written now would be "
            + "kept. Restart the server to open the database at its path again."
        let first = lostState.withLockedValue { current in
            defer { if current == nil { current = message } }
            return current == nil
        }
        if first { logger.critical("\(message)", metadata: .fleetauth(["store": "lost"])) }
        return lostState.withLockedValue { $0 } ?? message
    }

    /// A write succeeded.
    package func succeeded() {
        let recovered = state.withLockedValue { problem in
            defer { problem = nil }
            return problem != nil
        }
        if recovered { logger.notice("\(label) can be written again", metadata: .fleetauth(["store": "ok"])) }
    }

    /// A write failed with `error`: returns the error its caller gets (a storage failure becomes
    /// ``StoreError/unavailable(_:)`` in words; any other error is returned as it is).
    package func failed(_ error: any Error) -> any Error {
        guard let (cause, remedy) = Self.storageFailure(error) else { return error }
        let problem = "\(label) cannot be written: \(cause)"
        let changed = state.withLockedValue { current in
            defer { current = problem }
            return current != problem
        }
        if changed { logger.error("\(problem)", metadata: .fleetauth(["store": "failing"])) }
        return StoreError.unavailable(problem + ". Nothing was changed; try again once \(remedy).")
    }

    /// The cause in words when `error` is a failure of the disk rather than of the write, with what must change
    /// before a retry can succeed: nil otherwise.
    package static func storageFailure(_ error: any Error) -> (cause: String, remedy: String)? {
        guard let error = error as? DatabaseError else { return nil }
        switch error.resultCode {
        case .SQLITE_FULL: return ("the disk holding it is full", "there is room")
        case .SQLITE_IOERR: return ("the disk failed a write (I/O error)", "the disk writes again")
        case .SQLITE_READONLY: return ("its file cannot be written (read-only)", "the file can be written")
        // Another process (`fleetauth users`, a backup, an `sqlite3` shell) kept the write lock past the busy
        // timeout: every write waits it out, so the store is not ready until one gets through.
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return ("another connection holds its write lock (locked)", "the other connection lets go of it")
        default: return nil
        }
    }

    private var logger: Logger { log.withLockedValue { $0 } ?? Logger(label: "fleetauth.store") }
}
