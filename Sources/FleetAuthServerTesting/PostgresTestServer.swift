public import FleetAuthDatabase
import Foundation
import PostgresNIO

/// The PostgreSQL server the store tests run against: `FLEETAUTH_TEST_POSTGRES_URL` (a superuser's URL, such as
/// `postgres://postgres@127.0.0.1:54329/postgres`; `.ci/run` starts a throwaway cluster and sets it). Without it,
/// the PostgreSQL cases are skipped, and the availability test says so; with
/// `FLEETAUTH_REQUIRE_POSTGRES=1` (CI), a missing server fails the run instead. The suite's tests run at once, each
/// with connection pools of its own: give the server room for them (`.ci/run` starts it with
/// `-c max_connections=400`; PostgreSQL's default of 100 refuses some connections when many tests overlap).
public enum PostgresTestServer {
    public static let url: PostgresURL? = ProcessInfo.processInfo.environment["FLEETAUTH_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : try? PostgresURL($0)
    }
    public static let required = ProcessInfo.processInfo.environment["FLEETAUTH_REQUIRE_POSTGRES"] == "1"

    #if canImport(Testing)
        /// A new, empty database on the server, dropped when the test ends (the test needs the
        /// `.temporaryResources` trait: see ``TestResources``).
        public static func freshDatabase() async throws -> PostgresURL {
            try await TestResources.required().freshDatabase()
        }
    #endif
}
