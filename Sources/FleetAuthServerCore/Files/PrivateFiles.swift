import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The servers' data is this user's alone, whatever the umask: a data directory is `0700`, a database file (and its
/// write-ahead log and shared memory) `0600`. They hold password hashes, grants, the audit log, private keys and the
/// fleet.
package enum PrivateFiles {
    /// Creates `path` and its parents where missing, then makes `path` itself `0700`.
    package static func directory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o700)
    }

    /// Makes the SQLite database at `path` `0600` before it is opened: created empty if missing (SQLite takes an
    /// empty file as a new database, and gives its `-wal` and `-shm` files the database's mode), tightened if it
    /// and its companion files exist.
    package static func database(_ path: String) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            fchmod(descriptor, 0o600)
            close(descriptor)
        }
        for companion in [path + "-wal", path + "-shm", path + "-journal"] where access(companion, F_OK) == 0 {
            chmod(companion, 0o600)
        }
    }
}
