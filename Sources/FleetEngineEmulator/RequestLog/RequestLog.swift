import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
import NIOConcurrencyHelpers

/// The emulator's request log: one Cloud Logging entry per Fleet Engine call, kept in memory and read through
/// Cloud Logging's `entries:list` (<doc:RequestLog>).
///
/// The request path only appends a ``RequestLogRecord`` (a lock and an array append); the entries are built off that
/// path, by the log's service every 250 ms and before every read, so a read always sees every call answered before
/// it began. At most ``Configuration/capacity`` entries are kept, and none older than
/// ``Configuration/retention`` on the emulator's clock; the oldest go first. Records that arrive faster than they
/// can be built (more than ``Configuration/pendingLimit`` waiting) are dropped and counted, never queued without
/// bound.
final class RequestLog: Sendable {
    struct Configuration: Sendable, Hashable {
        /// The most entries kept.
        var capacity: Int = 100_000
        /// How long an entry is kept (Cloud Logging's default bucket keeps 30 days).
        var retention: Duration = .seconds(30 * 24 * 3600)
        /// The most records waiting to be built.
        var pendingLimit: Int = 50_000
    }

    /// One built entry, with what reads select it by.
    struct Entry: Sendable {
        let provider: String
        let timestamp: Date
        let sequence: UInt64
        let json: JSONObject
    }

    private struct State {
        var pending: [RequestLogRecord] = []
        var entries: [Entry] = []
        /// Entries before this index are gone (compacted away in batches).
        var head = 0
        var sequence: UInt64 = 0
        var dropped = 0
    }

    let configuration: Configuration
    private let clock: any WallClock
    private let accountOf: @Sendable (String) -> TrustedServiceAccount?
    private let state = NIOLockedValueBox(State())
    /// Serializes building, so entries keep the order their calls arrived in.
    private let building = NIOLock()

    init(
        configuration: Configuration = Configuration(),
        clock: any WallClock,
        accountOf: @escaping @Sendable (String) -> TrustedServiceAccount? = { _ in nil }
    ) {
        self.configuration = configuration
        self.clock = clock
        self.accountOf = accountOf
    }

    /// The emulator's time, for a record's arrival.
    var now: Date { clock.currentDate }

    /// Takes the record of one call (on the request path: no building here).
    func record(_ record: RequestLogRecord) {
        state.withLockedValue { state in
            if state.pending.count >= configuration.pendingLimit {
                state.dropped += 1
            } else {
                state.pending.append(record)
            }
        }
    }

    /// How many records were dropped because too many waited.
    var droppedCount: Int { state.withLockedValue { $0.dropped } }

    /// Builds the waiting records into entries and applies retention.
    func flush() {
        building.withLock {
            let records = state.withLockedValue { state in
                let taken = state.pending
                state.pending = []
                return taken
            }
            let now = clock.currentDate
            // Only the holder of `building` numbers entries, so the numbers read here stay free until appended.
            var sequence = state.withLockedValue { $0.sequence }
            var built: [Entry] = []
            built.reserveCapacity(records.count)
            for record in records {
                sequence += 1
                let (provider, json) = RequestLogEntryBuilder.entry(
                    record,
                    insertID: Self.insertID(sequence, record.received),
                    receivedAt: now,
                    accountOf: accountOf
                )
                built.append(Entry(provider: provider, timestamp: record.received, sequence: sequence, json: json))
            }
            let cutoff = now.addingTimeInterval(-Self.seconds(configuration.retention))
            state.withLockedValue { state in
                state.entries += built
                state.sequence = sequence
                var head = state.head
                let overflow = state.entries.count - head - configuration.capacity
                if overflow > 0 { head += overflow }
                while head < state.entries.count, state.entries[head].timestamp < cutoff { head += 1 }
                if head > 4096 && head * 2 > state.entries.count {
                    state.entries.removeFirst(head)
                    head = 0
                }
                state.head = head
            }
        }
    }

    /// The entries, oldest first, after building what waits.
    func entries() -> [Entry] {
        flush()
        return state.withLockedValue { Array($0.entries[$0.head...]) }
    }

    /// A unique entry ID: the sequence number and the call's time, as Cloud Logging's IDs are unique per log.
    static func insertID(_ sequence: UInt64, _ date: Date) -> String {
        let micros = UInt64(max(0, date.timeIntervalSince1970 * 1_000_000))
        return String(micros, radix: 36) + "-" + String(sequence, radix: 36)
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let components = duration.components
        return TimeInterval(components.seconds) + TimeInterval(components.attoseconds) * 1e-18
    }

    /// Builds entries every 250 ms, so memory holds entries rather than requests.
    func service(clock: any WallClock) -> PeriodicTask {
        PeriodicTask(name: "request log", interval: .milliseconds(250), clock: clock) { [self] in flush() }
    }
}

// MARK: - entries:list

extension RequestLog {
    /// One page of `entries:list`.
    struct Page: Sendable {
        var entries: [JSONObject]
        var nextPageToken: String?
    }

    static let defaultPageSize = 50
    static let maximumPageSize = 1000

    /// The entries of `resourceNames` (`projects/{provider}`) that pass `filter`, in `orderBy` order
    /// (`timestamp asc`, the default, or `timestamp desc`), `pageSize` at a time from `pageToken`.
    func list(
        resourceNames: [String],
        filter: String,
        orderBy: String,
        pageSize: Int,
        pageToken: String,
        allowed: (String) -> Bool
    ) throws(GoogleAPIError) -> Page {
        var providers: Set<String> = []
        for name in resourceNames {
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == "projects", !parts[1].isEmpty else {
                throw .invalidArgument(
                    "resourceNames: \"\(name.prefix(100))\" is not a project (projects/PROJECT_ID); the emulator's log holds each provider's entries under its project."
                )
            }
            providers.insert(String(parts[1]))
        }
        guard !providers.isEmpty else {
            throw .invalidArgument("resourceNames: name at least one project (projects/PROJECT_ID).")
        }
        for provider in providers.sorted() where !allowed(provider) {
            throw .permissionDenied(
                "Reading the request log of projects/\(provider) needs a token of that provider's account whose role reads the whole fleet (server or fleet reader)."
            )
        }
        let descending: Bool
        switch orderBy.split(separator: " ", omittingEmptySubsequences: true).map({ $0.lowercased() }) {
        case [], ["timestamp"], ["timestamp", "asc"]: descending = false
        case ["timestamp", "desc"]: descending = true
        default:
            throw .invalidArgument(
                "orderBy: \"\(orderBy.prefix(100))\" is not \"timestamp asc\" or \"timestamp desc\"."
            )
        }
        guard pageSize >= 0 else { throw .invalidArgument("pageSize: must not be negative.") }
        let size = pageSize == 0 ? Self.defaultPageSize : min(pageSize, Self.maximumPageSize)
        let filter = try LogFilter(filter)
        // The token is the sequence number of the last entry given, so a page goes on where the last one ended even
        // while new entries arrive.
        var after: UInt64?
        if !pageToken.isEmpty {
            guard let number = UInt64(pageToken, radix: 36) else {
                throw .invalidArgument("pageToken: not a token this log gave.")
            }
            after = number
        }
        let all = entries()
        let ordered: [Entry] =
            descending
            ? all.sorted { ($0.timestamp, $0.sequence) > ($1.timestamp, $1.sequence) }
            : all.sorted { ($0.timestamp, $0.sequence) < ($1.timestamp, $1.sequence) }
        var start = ordered.startIndex
        if let after, let index = ordered.firstIndex(where: { $0.sequence == after }) {
            start = index + 1
        } else if after != nil {
            throw .invalidArgument("pageToken: the entry it points after is no longer kept; list again from the start.")
        }
        var page: [JSONObject] = []
        var last: UInt64?
        var index = start
        while index < ordered.count, page.count < size {
            let entry = ordered[index]
            if providers.contains(entry.provider), filter.matches(entry.json) {
                page.append(entry.json)
                last = entry.sequence
            }
            index += 1
        }
        let more =
            index < ordered.count
            && ordered[index...].contains { providers.contains($0.provider) && filter.matches($0.json) }
        return Page(entries: page, nextPageToken: more ? last.map { String($0, radix: 36) } : nil)
    }
}
