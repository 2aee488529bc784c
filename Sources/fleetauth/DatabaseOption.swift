import FleetAuthServerSupport
import Foundation

/// `--database` and `DATABASE_URL`: where a server keeps its state when not in SQLite.
enum DatabaseOption {
    /// The PostgreSQL URL from `--database`, else from `DATABASE_URL` (ignored with `--in-memory`), or nil for
    /// SQLite. A malformed URL is a CLI error that names what is wrong and never shows the password.
    static func postgres(_ option: String?, inMemory: Bool = false) throws -> PostgresURL? {
        let environment = inMemory ? nil : ProcessInfo.processInfo.environment["DATABASE_URL"]
        guard let text = option ?? environment.flatMap({ $0.isEmpty ? nil : $0 }) else { return nil }
        do {
            return try PostgresURL(text)
        } catch {
            throw CLIError(error.message)
        }
    }
}
