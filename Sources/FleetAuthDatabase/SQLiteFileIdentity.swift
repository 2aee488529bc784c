#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which file a path names: its device and inode, read with `stat`.
///
/// SQLite keeps writing to the file it opened after that file is deleted or replaced (`rm`, a restore that moves
/// another file into place): every write still commits, into an inode no path names, and is gone when the server
/// stops. ``SQLiteDatabase`` records the identity at open and compares it after each write, so such writes are
/// refused instead of acknowledged.
struct SQLiteFileIdentity: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path` now, or nil when no file is there.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// Why the file at `path` is no longer this one, or nil while it is.
    func change(at path: String) -> String? {
        guard let now = SQLiteFileIdentity(path: path) else { return "its file \(path) was deleted" }
        return now == self ? nil : "its file \(path) was replaced by another"
    }
}
