/// One request log entry as a store keeps it: its provider, its time, and the entry itself (``StoredRequest``'s
/// bytes).
package struct StoredLogEntry: Sendable, Hashable {
    package var provider: String
    /// When the call arrived, in microseconds since 1970 on the emulator's clock.
    package var timestamp: Int64
    /// The entry, encoded.
    package var body: [UInt8]

    package init(provider: String, timestamp: Int64, body: [UInt8]) {
        self.provider = provider
        self.timestamp = timestamp
        self.body = body
    }
}

/// Where an entry stands in the log's order: by time, then by the store's own number (the order entries were
/// written in), so a page goes on exactly where the last one ended while new entries arrive.
package struct LogPosition: Sendable, Hashable, Comparable {
    package var timestamp: Int64
    package var id: Int64
    /// In a page token, how many parts of this stored call's split entry were already given (0: all of them).
    package var part: Int

    package init(timestamp: Int64, id: Int64, part: Int = 0) {
        self.timestamp = timestamp
        self.id = id
        self.part = part
    }

    package static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.timestamp, lhs.id, lhs.part) < (rhs.timestamp, rhs.id, rhs.part)
    }

    /// The position as a page token: the numbers in base 36.
    package var token: String {
        String(timestamp, radix: 36) + "-" + String(id, radix: 36) + (part > 0 ? "-" + String(part, radix: 36) : "")
    }

    package init?(token: String) {
        let parts = token.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, let timestamp = Int64(parts[0], radix: 36),
            let id = Int64(parts[1], radix: 36), timestamp >= 0, id >= 0
        else { return nil }
        var part = 0
        if parts.count == 3 {
            guard let value = Int(parts[2], radix: 36), value > 0, value < 1 << 20 else { return nil }
            part = value
        }
        self.init(timestamp: timestamp, id: id, part: part)
    }
}

/// The request log's table in the emulator's store (``RequestLog``): written in batches off the request path,
/// read in position order, trimmed by count and age. Several emulators on one PostgreSQL share it.
package protocol RequestLogStore: Sendable {
    /// Appends `entries` in one transaction, numbered in their order.
    func appendLogEntries(_ entries: [StoredLogEntry]) async throws

    /// Up to `limit` entries of `providers` after `position` (from the first or the last when nil), in position
    /// order (the latest first when `descending`), none older than `notBefore` (microseconds).
    func logEntries(
        providers: [String],
        descending: Bool,
        after position: LogPosition?,
        notBefore: Int64,
        limit: Int
    ) async throws -> [(position: LogPosition, body: [UInt8])]

    /// Deletes the entries older than `before` (microseconds), and all but the latest `count` written.
    func trimLog(keepingLatest count: Int, before: Int64) async throws

    /// Deletes every entry of `provider` (a reset, <doc:TestControls>).
    func deleteLogEntries(provider: String) async throws
}
