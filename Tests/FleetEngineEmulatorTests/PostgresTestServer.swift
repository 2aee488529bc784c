import FleetAuthDatabase
import FleetAuthServerTesting
import PostgresNIO
import Testing

@Suite("PostgreSQL for the store tests")
struct PostgresAvailabilityTests {
    @Test(
        "a PostgreSQL server is configured (FLEETAUTH_TEST_POSTGRES_URL); without one the PostgreSQL cases are skipped",
        .enabled(
            if: PostgresTestServer.url != nil || PostgresTestServer.required,
            "no PostgreSQL server: set FLEETAUTH_TEST_POSTGRES_URL to run the PostgreSQL store cases"
        )
    )
    func configured() async throws {
        let url = try #require(
            PostgresTestServer.url,
            "FLEETAUTH_REQUIRE_POSTGRES=1 but no FLEETAUTH_TEST_POSTGRES_URL"
        )
        let rows = try await PostgreSQLDatabase.withDatabase(url, migrations: nil, maximumConnections: 1) {
            try await $0.query("SELECT 1")
        }
        #expect(rows.count == 1)
    }
}
