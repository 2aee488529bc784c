public import Foundation

/// Pruning of what would otherwise grow without bound: audit entries past their retention, expired sessions and
/// forgotten login failures. Each call does a bounded amount of work (one short transaction), so pruning never
/// holds up token requests; the caller repeats it until nothing is left.
public protocol RetentionStore: Sendable {
    /// Deletes up to `limit` audit entries issued before `cutoff`, oldest first; returns how many it deleted.
    /// `0` also when another instance is pruning at the moment (on a shared database one instance prunes at a time).
    func pruneAudit(issuedBefore cutoff: Date, limit: Int) async throws -> Int
    /// Deletes up to `limit` sessions expired at `now` and login failures forgotten at `now`; returns how many.
    func pruneExpired(at now: Date, limit: Int) async throws -> Int
}
