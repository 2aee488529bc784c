import FleetAuthServerCore
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// How PostgreSQL's failures are told, sorted and logged: in FleetAuth's words, whether the database was reached,
/// and each outage once.
extension PostgreSQLDatabase {
    /// Whether `error` says the database could not be reached or dropped the connection (rather than refusing a
    /// statement).
    static func isConnectionFailure(_ error: any Error) -> Bool {
        if let error = error as? PostgresTransactionError {
            return isConnectionFailure(
                error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError ?? error
            )
        }
        guard let error = error as? PSQLError else { return !(error is StoreError) }
        if let state = error.serverInfo?[.sqlState] {
            // Admin shutdown, crash shutdown, cannot connect now (starting or stopping).
            return ["57P01", "57P02", "57P03"].contains(state)
        }
        return [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed]
            .contains(error.code)
    }

    /// Whether `error` is a TCP connection that timed out, under PostgresNIO's wrapper.
    static func isConnectTimeout(_ error: any Error) -> Bool {
        if case ChannelError.connectTimeout = error { return true }
        guard let error = error as? PSQLError, let underlying = error.underlying else { return false }
        return isConnectTimeout(underlying)
    }

    /// What went wrong, in one line and in FleetAuth's words: the server's message and SQL state, or what happened to
    /// the connection. Never the password, and never a library's placeholder text ("PSQLError – Generic
    /// description…", which PostgresNIO prints for its errors to keep their details out of logs).
    package static func reason(_ error: any Error) -> String {
        if let error = error as? PostgresTransactionError {
            return reason(error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError ?? error)
        }
        if isConnectTimeout(error) { return "the database did not accept a connection in time" }
        if let error = error as? PSQLError {
            if let info = error.serverInfo, let message = info[.message] {
                return "\(message) (SQLSTATE \(info[.sqlState] ?? "?"))"
            }
            // The underlying error, unless it only says the same again ("the database closed the connection:
            // the database closed the connection.").
            let inner = error.underlying.map(reason)
            func with(_ text: String) -> String {
                guard let inner else { return text }
                return inner.hasPrefix(text) ? inner : text + ": " + inner
            }
            switch error.code {
            case .connectionError: return with("cannot connect to the database")
            case .serverClosedConnection: return with("the database closed the connection")
            case .clientClosedConnection: return with("the connection to the database was closed")
            case .uncleanShutdown: return with("the connection to the database ended uncleanly")
            case .poolClosed: return "the connection pool is closed (the server is shutting down)"
            case .queryCancelled: return "the statement was cancelled"
            case .sslUnsupported: return "the database does not offer TLS, which the URL requires"
            case .authMechanismRequiresPassword: return "the database asks for a password, and the URL has none"
            case .unsupportedAuthMechanism: return "the database asks for an authentication method FleetAuth lacks"
            default: return with("a PostgreSQL client error (\(error.code))")
            }
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused (is PostgreSQL running there?)"
            case ECONNRESET: return "the connection was reset"
            case ETIMEDOUT: return "the connection timed out"
            default: return "a network error (\(String(cString: strerror(error.errnoCode))))"
            }
        }
        let text = "\(error)"
        // NIO's connection error lists every address tried; the refusal is what matters.
        if text.contains("Connection refused") { return "connection refused (is PostgreSQL running there?)" }
        // Another library's error that hides its details behind a placeholder: say only what kind it is.
        if text.contains("Generic description") { return "a PostgreSQL client error (\(type(of: error)))" }
        return text
    }

    /// Logs each change of the database's state once, as the production article promises: an outage as an error
    /// when it starts (refusing connections, or not answering), and a notice when it answers again. Logged to
    /// `fleetauth.store`, made when a line is logged so it uses the logging system the server bootstrapped.
    static func outageLog(_ url: PostgresURL) -> @Sendable (DatabaseDeadline.State) -> Void {
        { state in
            let logger = Logger(label: "fleetauth.store")
            switch state {
            case .refusing:
                logger.error(
                    "PostgreSQL at \(url.location) cannot be reached: requests that need it are answered 503 until it is back",
                    metadata: .fleetauth(["store": "unreachable"])
                )
            case .notAnswering:
                logger.error(
                    "PostgreSQL at \(url.location) is not answering in time: requests that need it are answered 504 until it does",
                    metadata: .fleetauth(["store": "not_answering"])
                )
            case .answering:
                logger.notice("PostgreSQL at \(url.location) answers again", metadata: .fleetauth(["store": "ok"]))
            }
        }
    }

    /// The error for a failed call, in FleetAuth's words; notes whether the database was reached.
    ///
    /// A call that got no answer in time is ``StoreError/deadlineExceeded(_:)``: the database may have received
    /// its statement and may still commit it, so the message says to read before writing again. A call that could
    /// not reach the database is ``StoreError/unavailable(_:)``: nothing was sent.
    func unavailable(_ error: any Error) -> StoreError {
        let mayApply =
            "A change this call asked for may still be applied once it answers: read it back before trying again."
        if let expiry = error as? DatabaseDeadline.Expiry {
            switch expiry {
            case .noAnswer(let limit):
                deadline.note(.notAnswering)
                return .deadlineExceeded("PostgreSQL at \(url.location) did not answer within \(limit). \(mayApply)")
            case .down(let limit, .refusing):
                return .unavailable(
                    "PostgreSQL at \(url.location) cannot be reached (no connection within \(limit)); try again shortly."
                )
            case .down(let limit, _):
                return .deadlineExceeded(
                    "PostgreSQL at \(url.location) is not answering (nothing within \(limit), after an earlier call got "
                        + "no answer in time). \(mayApply)"
                )
            }
        }
        deadline.note(reached: !Self.isConnectionFailure(error))
        return .unavailable("PostgreSQL at \(url.location): \(Self.reason(error)).")
    }
}
