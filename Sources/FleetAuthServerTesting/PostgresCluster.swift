public import FleetAuthDatabase
import FleetAuthServerCore
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A PostgreSQL server of a test's own, for faults the shared test server must not suffer: `initdb` in a temporary
/// directory, `pg_ctl` to start it on a free loopback port, stop it (`fast` or `immediate`) and start it again on
/// the same port, as an operator or a crash would. Trust authentication, loopback only; the directory is removed by
/// ``remove()``.
///
/// It needs PostgreSQL's server binaries (`initdb`, `pg_ctl`: `FLEETAUTH_POSTGRES_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin`, else `PATH`); as root it runs them as the `postgres` user (`runuser`), as `.ci/run`
/// does. Each call blocks until `pg_ctl` has finished (`-w`); call it from a thread that may block
/// (``run(_:)`` does).
public final class PostgresCluster: Sendable {
    /// The server's port on 127.0.0.1.
    public let port: Int
    /// The superuser's URL (database `postgres`, no TLS).
    public let url: PostgresURL
    private let directory: String
    private let bin: String
    private let asPostgres: Bool

    /// Where the server binaries are, or nil when PostgreSQL is not installed.
    public static var binDirectory: String? {
        if let configured = ProcessInfo.processInfo.environment["FLEETAUTH_POSTGRES_BIN"], !configured.isEmpty {
            return configured
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap { Int($0) }.sorted()
        if let newest = versions.last, FileManager.default.isExecutableFile(atPath: "\(root)/\(newest)/bin/initdb") {
            return "\(root)/\(newest)/bin"
        }
        return SoftHSM.executable("initdb").map { ($0 as NSString).deletingLastPathComponent }
    }

    /// Creates and starts a new cluster.
    public init() throws {
        guard let bin = Self.binDirectory else { throw PostgresClusterError("PostgreSQL's initdb is not installed") }
        self.bin = bin
        asPostgres = getuid() == 0
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "fleetauth-pg-\(UUID().uuidString.prefix(8))"
            ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try RestartablePorts.reserve()
        url = PostgresURL(host: "127.0.0.1", port: port, username: "postgres", database: "postgres", tls: .disable)
        if asPostgres { try run("/bin/chown", ["postgres", directory], asPostgres: false) }
        try run(
            "\(bin)/initdb",
            ["-D", "\(directory)/data", "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"],
            asPostgres: asPostgres
        )
        try start()
    }

    /// Starts the server (after ``stop(mode:)``) on the same port, and waits until it accepts connections.
    public func start() throws {
        try run(
            "\(bin)/pg_ctl",
            [
                "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-o",
                "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off", "start",
            ],
            asPostgres: asPostgres
        )
    }

    /// Stops the server: `fast` ends every session (each gets an admin-shutdown error, then the server closes its
    /// socket), `immediate` kills the server processes as a crash would.
    public func stop(mode: String = "fast") throws {
        try run("\(bin)/pg_ctl", ["-D", "\(directory)/data", "-m", mode, "-w", "stop"], asPostgres: asPostgres)
    }

    /// Freezes the server and every backend (SIGSTOP): connections stay open, and nothing sent on them is answered —
    /// a database that hangs, rather than one that refuses. ``thaw()`` lets it go on.
    public func freeze() throws { try signalServer(SIGSTOP) }

    /// Lets a frozen server go on (SIGCONT).
    public func thaw() throws { try signalServer(SIGCONT) }

    /// Sends `signal` to the postmaster and every process it started.
    private func signalServer(_ signal: Int32) throws {
        guard let text = try? String(contentsOfFile: "\(directory)/data/postmaster.pid", encoding: .utf8),
            let line = text.split(separator: "\n").first, let postmaster = pid_t(line)
        else { throw PostgresClusterError("the server is not running (no postmaster.pid)") }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (name)": the state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster { pids.append(pid) }
        }
        // The postmaster first when freezing, last when thawing, so it starts no backend meanwhile.
        for pid in signal == SIGCONT ? pids.reversed() : pids { kill(pid, signal) }
    }

    /// Stops the server (if running) and removes its directory.
    public func remove() {
        try? thaw()
        try? stop(mode: "immediate")
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` with a new cluster on a thread of its own (it blocks while `initdb` and `pg_ctl` run), then
    /// removes the cluster.
    public static func run<Result: Sendable>(_ body: @Sendable (PostgresCluster) async throws -> Result)
        async throws -> Result
    {
        let cluster = try await blocking { try PostgresCluster() }
        do {
            let result = try await body(cluster)
            await blocking { cluster.remove() }
            return result
        } catch {
            await blocking { cluster.remove() }
            throw error
        }
    }

    /// `work` on a thread of its own, so a blocking call never holds a thread of the cooperative pool.
    public static func blocking<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws
        -> Result
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try work() }) }.start()
        }
    }

    /// ``blocking(_:)`` for work that cannot fail.
    public static func blocking(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            Thread {
                work()
                continuation.resume()
            }.start()
        }
    }

    /// Runs a tool to its end. Its output goes to a file, not a pipe (the server `pg_ctl start` leaves running
    /// inherits the tool's descriptors, so a pipe would never reach its end), and the tool is spawned and reaped
    /// with `posix_spawn` and `waitpid` (Foundation's `Process` can miss the exit of a `runuser` whose grandchild
    /// lives on).
    private func run(_ executable: String, _ arguments: [String], asPostgres: Bool) throws {
        let argv =
            asPostgres
            ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments
        let outputPath = directory + "/tool.out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw PostgresClusterError("cannot run \(argv[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // Exited normally with status 0 (the wait status's low 7 bits are 0 for an exit, the next 8 its code).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? ""
            throw PostgresClusterError(
                "\((executable as NSString).lastPathComponent) \(arguments.last ?? "") failed: \(text.suffix(300)) \(log.suffix(300))"
            )
        }
    }
}

/// A test cluster could not be made, started or stopped; the message says why (with the end of the server's log).
public struct PostgresClusterError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
