public import FleetAuthServerSupport
import Foundation
import PostgresNIO

/// The PostgreSQL server the store tests run against: `FLEETAUTH_TEST_POSTGRES_URL` (a superuser's URL, such as
/// `postgres://postgres@127.0.0.1:54329/postgres`; `.ci/run` starts a throwaway cluster and sets it). Without it,
/// the PostgreSQL cases are skipped, and the availability test says so; with
/// `FLEETAUTH_REQUIRE_POSTGRES=1` (CI), a missing server fails the run instead.
public enum PostgresTestServer {
    public static let url: PostgresURL? = ProcessInfo.processInfo.environment["FLEETAUTH_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : try? PostgresURL($0)
    }
    public static let required = ProcessInfo.processInfo.environment["FLEETAUTH_REQUIRE_POSTGRES"] == "1"

    /// A new, empty database on the server, for one test.
    public static func freshDatabase() async throws -> PostgresURL {
        guard var url else { throw StoreError.unavailable("No PostgreSQL server is configured.") }
        let admin = try await PostgreSQLDatabase.connect(url, migrations: nil, maximumConnections: 1)
        let name = "fleetauth_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        defer { Task { await admin.close() } }
        _ = try await admin.query(.init(unsafeSQL: "CREATE DATABASE \(name)"))
        url.database = name
        return url
    }
}
