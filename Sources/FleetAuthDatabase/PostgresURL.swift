public import FleetAuthServerCore
import Foundation

/// Where a PostgreSQL database is: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE]` (also
/// `postgresql://`), the form `--database` and `DATABASE_URL` take. User and password may be percent-encoded;
/// `sslmode` is `disable`, `prefer` (the default) or `require`.
///
/// Its `description` never shows the password, so it can be logged and put in error messages.
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    /// How to use TLS.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String? = nil,
        database: String,
        tls: TLSMode = .prefer
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Parses a database URL; the error names what is wrong and never repeats the password.
    public init(_ text: String) throws(StoreError) {
        func invalid(_ problem: String) -> StoreError {
            .unavailable("Invalid database URL (\(problem)); expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
        }
        guard let schemeEnd = text.range(of: "://") else { throw invalid("no scheme") }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw invalid("the scheme is \(scheme.prefix(20)), not postgres")
        }
        var rest = Substring(text[schemeEnd.upperBound...])
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let at = rest.lastIndex(of: "@") else { throw invalid("no user") }
        let userInfo = rest[..<at]
        let location = rest[rest.index(after: at)...]
        guard let slash = location.firstIndex(of: "/") else { throw invalid("no database name") }
        let hostPort = location[..<slash]
        let databaseText = location[location.index(after: slash)...]

        let userParts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let user = String(userParts[0]).removingPercentEncoding, !user.isEmpty else {
            throw invalid("no user")
        }
        var password: String?
        if userParts.count == 2 {
            guard let decoded = String(userParts[1]).removingPercentEncoding else {
                throw invalid("the password is not valid percent-encoding")
            }
            password = decoded
        }

        var host = String(hostPort)
        var port = 5432
        if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") {
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()), (1...65535).contains(value) else {
                    throw invalid("the port is not a number from 1 to 65535")
                }
                port = value
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = String(hostPort[..<colon])
            guard let value = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(value) else {
                throw invalid("the port is not a number from 1 to 65535")
            }
            port = value
        }
        guard !host.isEmpty else { throw invalid("no host") }
        guard let database = String(databaseText).removingPercentEncoding, !database.isEmpty,
            !database.contains("/")
        else { throw invalid("no database name") }

        var tls = TLSMode.prefer
        for item in query.split(separator: "&") where !item.isEmpty {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, pair[0] == "sslmode" else {
                throw invalid("unknown parameter \(pair[0].prefix(40)); only sslmode is read")
            }
            guard let mode = TLSMode(rawValue: String(pair[1])) else {
                throw invalid("sslmode must be disable, prefer or require")
            }
            tls = mode
        }
        self.init(host: host, port: port, username: user, password: password, database: database, tls: tls)
    }

    /// Whether `text` is a PostgreSQL URL rather than a path.
    public static func isPostgres(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// `postgres://user@host:port/database`, without the password.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(username)@\(shownHost):\(port)/\(database)"
    }

    /// `host:port/database`, for messages.
    public var location: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(shownHost):\(port)/\(database)"
    }
}
