import FleetAuthCore
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import SwiftProtobuf

/// The emulator's request log: one Cloud Logging entry per Fleet Engine call, kept in the emulator's store
/// (``RequestLogStore``: SQLite, or PostgreSQL shared by several instances) and read through Cloud Logging's
/// `entries:list` (<doc:RequestLog>).
///
/// The request path only appends a ``RequestLogRecord`` (a lock and an array append); the entries are built and
/// written off that path, in one transaction per batch, by the log's service every 250 ms and before every read, so
/// a read always sees every call answered before it began. At most ``Configuration/capacity`` entries are kept, and
/// none older than ``Configuration/retention`` on the emulator's clock; the oldest go first. Records that arrive
/// faster than they can be written (more than ``Configuration/pendingLimit`` waiting), or that the store cannot
/// take, are dropped and counted, never queued without bound and never failing the call they describe; the
/// store's failing and recovering are logged once each.
final class RequestLog: Sendable {
    struct Configuration: Sendable, Hashable {
        /// The most entries kept.
        var capacity: Int = 100_000
        /// How long an entry is kept (Cloud Logging's default bucket keeps 30 days).
        var retention: Duration = .seconds(30 * 24 * 3600)
        /// The most records waiting to be written.
        var pendingLimit: Int = 50_000
    }

    private struct State {
        var pending: [RequestLogRecord] = []
        var sequence: UInt64 = 0
        /// Entries written since retention was last applied, and when it was.
        var writtenSinceTrim = 0
        var trimmed: Date?
        var failing = false
    }

    let configuration: Configuration
    private let store: any RequestLogStore
    private let clock: any WallClock
    private let accountOf: @Sendable (String) -> TrustedServiceAccount?
    private let metrics: EmulatorMetrics?
    /// The request and response types of every RPC, by full proto name, to read stored messages back.
    private let messageTypes: [String: any SwiftProtobuf.Message.Type]
    private let state = NIOLockedValueBox(State())
    private let logger = NIOLockedValueBox(Logger.silent(label: "fleetauth.emulator.request-log"))
    /// Serializes writing, so entries are numbered in the order their calls arrived and a read waits for a write
    /// in progress.
    private let writing = AsyncGate()
    /// The decisions of accepted calls, each worked out once per token and checks.
    private let decisions = DecisionMemo()
    /// Tells this instance's entry IDs from another's on a shared database.
    private let instance = String(UInt32.random(in: .min ... .max), radix: 36)

    init(
        configuration: Configuration = Configuration(),
        store: any RequestLogStore,
        clock: any WallClock,
        metrics: EmulatorMetrics? = nil,
        messageTypes: [String: any SwiftProtobuf.Message.Type] = [:],
        accountOf: @escaping @Sendable (String) -> TrustedServiceAccount? = { _ in nil }
    ) {
        self.messageTypes = messageTypes
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.accountOf = accountOf
    }

    /// The emulator's time, for a record's arrival.
    var now: Date { clock.currentDate }

    /// Takes the record of one call (on the request path: no building here).
    func record(_ record: RequestLogRecord) {
        let kept = state.withLockedValue { state in
            guard state.pending.count < configuration.pendingLimit else { return false }
            state.pending.append(record)
            return true
        }
        if !kept { metrics?.requestLogDropped(1) }
    }

    /// Builds the waiting records into entries, writes them, and applies retention.
    func flush() async {
        await writing.run {
            let records = state.withLockedValue { state in
                let taken = state.pending
                state.pending = []
                return taken
            }
            let now = clock.currentDate
            if !records.isEmpty { await write(records, at: now) }
            await trimIfDue(at: now)
        }
    }

    private func write(_ records: [RequestLogRecord], at now: Date) async {
        // Only the holder of `writing` numbers entries, so the numbers read here stay free until stored.
        var sequence = state.withLockedValue { $0.sequence }
        var entries: [StoredLogEntry] = []
        entries.reserveCapacity(records.count)
        for (index, record) in records.enumerated() {
            // The cooperative pool has a thread per core: a quarter second of calls built in one go kept one of
            // them from the calls in flight for milliseconds.
            if index % 32 == 31 { await Task.yield() }
            sequence += 1
            let stored = RequestLogEntryBuilder.stored(
                record,
                insertID: Self.insertID(sequence, record.received, instance: instance),
                loggedAt: now,
                accountOf: accountOf,
                decisions: decisions
            )
            guard let body = try? stored.encoded() else { continue }
            entries.append(StoredLogEntry(provider: stored.provider, timestamp: stored.received, body: body))
        }
        state.withLockedValue { $0.sequence = sequence }
        do {
            try await store.appendLogEntries(entries)
            metrics?.requestLogWritten(entries.count)
            let recovered = state.withLockedValue { state in
                state.writtenSinceTrim += entries.count
                defer { state.failing = false }
                return state.failing
            }
            if recovered { logger.withLockedValue { $0 }.notice("The request log is written to the store again.") }
        } catch {
            metrics?.requestLogDropped(entries.count)
            let started = state.withLockedValue { state in
                defer { state.failing = true }
                return !state.failing
            }
            if started {
                logger.withLockedValue { $0 }.error(
                    "The store cannot take the request log's entries; calls go on being answered, their entries are dropped and counted until it can: \(error)"
                )
            }
        }
    }

    /// Applies retention once a twentieth of the capacity was written or ten seconds passed since the last time.
    private func trimIfDue(at now: Date) async {
        let due = state.withLockedValue { state in
            state.writtenSinceTrim >= max(1, configuration.capacity / 20)
                || state.trimmed.map { now.timeIntervalSince($0) >= 10 || now < $0 } ?? true
        }
        guard due else { return }
        do {
            try await store.trimLog(keepingLatest: configuration.capacity, before: oldestKept(at: now))
            state.withLockedValue { state in
                state.writtenSinceTrim = 0
                state.trimmed = now
            }
        } catch {
            // Tried again at the next write; a read never shows what retention removes (`oldestKept`).
        }
    }

    /// The time of the oldest entry retention keeps, in microseconds.
    private func oldestKept(at now: Date) -> Int64 {
        Self.microseconds(now.addingTimeInterval(-Self.seconds(configuration.retention)))
    }

    /// A unique entry ID: the call's time, this instance and its sequence number, as Cloud Logging's IDs are unique
    /// per log.
    static func insertID(_ sequence: UInt64, _ date: Date, instance: String) -> String {
        String(UInt64(max(0, microseconds(date))), radix: 36) + "-" + instance + "-" + String(sequence, radix: 36)
    }

    static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let components = duration.components
        return TimeInterval(components.seconds) + TimeInterval(components.attoseconds) * 1e-18
    }

    /// Writes entries every 250 ms, so memory holds at most a quarter second of calls, and once more on shutdown
    /// so the last calls' entries are kept.
    func service(clock: any WallClock, logger: Logger) -> some Service {
        self.logger.withLockedValue { $0 = logger }
        return Writer(
            log: self,
            task: PeriodicTask(name: "request log", interval: .milliseconds(250), clock: clock, logger: logger) {
                [self] in await flush()
            }
        )
    }

    private struct Writer: Service {
        let log: RequestLog
        let task: PeriodicTask

        func run() async throws {
            try await task.run()
            await log.flush()
        }
    }
}

/// Runs one body at a time, in the order they came.
final class AsyncGate: Sendable {
    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    func run<T>(_ body: () async throws -> T) async rethrows -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let enter = state.withLockedValue { state in
                if state.busy {
                    state.waiting.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if enter { continuation.resume() }
        }
        defer {
            let next = state.withLockedValue { state in
                if state.waiting.isEmpty {
                    state.busy = false
                    return nil as CheckedContinuation<Void, Never>?
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
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

    /// How many entries a read looks at, at most, before it answers with what it found and a token to go on
    /// from (as Cloud Logging answers a long scan: a short or empty page, and a `nextPageToken`).
    static let scanLimit = 20_000

    /// The entries of `resourceNames` (`projects/{provider}`) that pass `filter`, in `orderBy` order
    /// (`timestamp asc`, the default, or `timestamp desc`), `pageSize` at a time from `pageToken`.
    func list(
        resourceNames: [String],
        filter: String,
        orderBy: String,
        pageSize: Int,
        pageToken: String,
        allowed: (String) -> Bool
    ) async throws(GoogleAPIError) -> Page {
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
        // The token is the position of the last entry looked at, so a page goes on where the last one ended even
        // while new entries arrive.
        var position: LogPosition?
        // A page that ended inside a split entry goes on with that stored call's next part: the scan starts just
        // before the call, and skips the parts already given.
        var resume: LogPosition?
        if !pageToken.isEmpty {
            guard let token = LogPosition(token: pageToken) else {
                throw .invalidArgument("pageToken: not a token this log gave.")
            }
            position = token
            if token.part > 0 {
                resume = token
                position = LogPosition(timestamp: token.timestamp, id: token.id + (descending ? 1 : -1))
            }
        }
        await flush()
        let names = providers.sorted()
        let notBefore = oldestKept(at: clock.currentDate)
        let types = messageTypes
        var page: [JSONObject] = []
        var scanned = 0
        var last = position
        // After a full page, one more match says whether a next page exists.
        var more = false
        scan: while scanned < Self.scanLimit {
            let batch: [(position: LogPosition, body: [UInt8])]
            do {
                batch = try await store.logEntries(
                    providers: names,
                    descending: descending,
                    after: position,
                    notBefore: notBefore,
                    limit: min(500, Self.scanLimit - scanned)
                )
            } catch {
                throw .unavailable("The request log cannot be read from the store now; try again: \(error)")
            }
            for (at, body) in batch {
                scanned += 1
                position = at
                var skip = 0
                if let from = resume {
                    if (from.timestamp, from.id) == (at.timestamp, at.id) { skip = from.part }
                    resume = nil
                }
                guard let stored = try? StoredRequest(decoding: body, types: types) else { continue }
                let parts = RequestLogEntryBuilder.split(RequestLogEntryBuilder.entry(stored))
                for index in parts.indices.dropFirst(skip) where filter.matches(parts[index]) {
                    if page.count == size {
                        more = true
                        break scan
                    }
                    page.append(parts[index])
                    last =
                        index == parts.count - 1 ? at : LogPosition(timestamp: at.timestamp, id: at.id, part: index + 1)
                }
            }
            if batch.count < 500 { break }
        }
        if !more, scanned == Self.scanLimit, let position {
            // The scan stopped before the end: the next page goes on after the last entry looked at.
            return Page(entries: page, nextPageToken: page.count == size ? last?.token : position.token)
        }
        return Page(entries: page, nextPageToken: more ? last?.token : nil)
    }
}
