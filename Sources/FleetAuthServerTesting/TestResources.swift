#if canImport(Testing)
    public import FleetAuthDatabase
    import FleetAuthServerCore
    import Foundation
    import NIOConcurrencyHelpers
    import PostgresNIO
    public import Testing

    /// What a test opens that must not outlive it: PostgreSQL connection pools, databases on the test server and
    /// temporary directories. Give a suite or test the ``Testing/Trait/temporaryResources`` trait; inside it,
    /// ``current`` opens them, and when the test ends its pools are closed, its databases dropped and its
    /// directories removed — whether it passed, failed or threw.
    public final class TestResources: Sendable {
        /// The running test's resources (nil outside a test with the trait).
        @TaskLocal public static var current: TestResources?

        package let pools: PostgresPools
        private let directories = NIOLockedValueBox<[String]>([])
        private let databases = NIOLockedValueBox<[PostgresURL]>([])

        init(pools: PostgresPools) {
            self.pools = pools
        }

        /// The running test's resources; an error naming the trait outside one.
        public static func required() throws -> TestResources {
            guard let current else {
                throw StoreError.unavailable("Give the test the .temporaryResources trait to open test resources.")
            }
            return current
        }

        /// A new, empty directory, removed when the test ends.
        public func temporaryDirectory(_ prefix: String = "fleetauth-test") throws -> String {
            let path = FileManager.default.temporaryDirectory
                .appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            directories.withLockedValue { $0.append(path) }
            return path
        }

        /// A new, empty database on the tests' PostgreSQL server (``PostgresTestServer``), dropped when the test
        /// ends.
        public func freshDatabase() async throws -> PostgresURL {
            guard var url = PostgresTestServer.url else {
                throw StoreError.unavailable("No PostgreSQL server is configured.")
            }
            let admin = url
            url.database = "fleetauth_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            let name = url.database
            databases.withLockedValue { $0.append(url) }
            try await PostgreSQLDatabase.withDatabase(admin, migrations: nil, maximumConnections: 1) { database in
                _ = try await database.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
            }
            return url
        }

        /// Runs `body` with fresh resources, then releases them: pools first (the scope waits for them), then
        /// databases, then directories.
        static func scope(_ body: () async throws -> Void) async throws {
            let resources = NIOLockedValueBox<TestResources?>(nil)
            let outcome: Result<Void, any Error>
            do {
                try await PostgresPools.withPools { pools in
                    let current = TestResources(pools: pools)
                    resources.withLockedValue { $0 = current }
                    try await $current.withValue(current) { try await body() }
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            if let current = resources.withLockedValue({ $0 }) { await current.release() }
            try outcome.get()
        }

        private func release() async {
            for url in databases.withLockedValue({ $0 }) {
                guard let admin = PostgresTestServer.url else { break }
                let name = url.database
                try? await PostgreSQLDatabase.withDatabase(admin, migrations: nil, maximumConnections: 1) { database in
                    _ = try await database.query(
                        PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                    )
                }
            }
            for path in directories.withLockedValue({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        }
    }

    /// The trait that gives a test its ``TestResources``; on a suite, each of its tests (and each case of a
    /// parameterized test) gets its own.
    public struct TemporaryResourcesTrait: TestTrait, SuiteTrait, TestScoping {
        public var isRecursive: Bool { true }

        public func provideScope(
            for test: Test,
            testCase: Test.Case?,
            performing function: @Sendable () async throws -> Void
        ) async throws {
            // One scope per test case (or per non-parameterized test); a suite itself needs none.
            guard !test.isSuite, testCase != nil || !test.isParameterized, TestResources.current == nil else {
                return try await function()
            }
            try await TestResources.scope(function)
        }
    }

    extension Trait where Self == TemporaryResourcesTrait {
        /// Pools, databases and directories the test opens through ``TestResources`` are released when it ends.
        public static var temporaryResources: Self { TemporaryResourcesTrait() }
    }
#endif
