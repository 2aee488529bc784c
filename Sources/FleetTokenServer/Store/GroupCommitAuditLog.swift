import FleetAuthDatabase
import Foundation

/// An ``AuditLog`` that commits the entries of concurrent token requests together (group commit).
///
/// Every token's audit entry must be durable before the token is answered, and one transaction per token makes the
/// database's commit the token server's ceiling. Here a request's entry joins the batch being gathered while the
/// previous batch commits; each batch is one transaction of the underlying log, and every request waits until the
/// transaction holding its entry has committed (or failed, which fails every request in it). No entry is answered
/// before it is durable; a lone request waits for one commit, as before.
///
/// No task is started: the request that finds no commit under way leads, committing its own entries with those
/// waiting; when that commit ends it hands the lead to the first request that arrived meanwhile, and returns.
public final class GroupCommitAuditLog: AuditLog {
    /// Where batches are written.
    public let log: any AuditLog
    /// The most entries written in one transaction.
    public let maximumBatch: Int
    private let batches: GroupCommit<[AuditEntry], Void>

    /// How many requests wait for a commit now.
    package var waitingRequests: Int { batches.waitingRequests }

    public init(_ log: any AuditLog, maximumBatch: Int = 512) {
        self.log = log
        self.maximumBatch = maximumBatch
        batches = GroupCommit(maximumBatch: maximumBatch, weight: \.count) { requests in
            try await log.append(contentsOf: requests.flatMap(\.self))
            return requests.map { _ in () }
        }
    }

    public func append(contentsOf entries: [AuditEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await batches.submit(entries)
    }

    public func recentEntries(limit: Int) async throws -> [AuditEntry] {
        try await log.recentEntries(limit: limit)
    }
}
