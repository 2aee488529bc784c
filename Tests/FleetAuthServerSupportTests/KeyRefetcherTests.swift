import FleetAuthServerCore
import FleetAuthTesting
import Logging
import NIOConcurrencyHelpers
import Testing

/// A key source whose fetches the test releases one at a time.
final class GatedSource: Sendable {
    private let state = NIOLockedValueBox<(count: Int, fail: Bool, waiters: [CheckedContinuation<Void, Never>])>(
        (0, false, [])
    )

    var count: Int { state.withLockedValue { $0.count } }
    var waiting: Int { state.withLockedValue { $0.waiters.count } }
    func failNext(_ fail: Bool) { state.withLockedValue { $0.fail = fail } }

    func load() async throws -> [String] {
        let number = state.withLockedValue { state -> Int in
            state.count += 1
            return state.count
        }
        await withCheckedContinuation { continuation in state.withLockedValue { $0.waiters.append(continuation) } }
        if state.withLockedValue({ $0.fail }) { throw SourceDown() }
        return ["key-\(number)"]
    }

    func release() {
        for waiter in state.withLockedValue({ state in
            defer { state.waiters = [] }; return state.waiters
        }) {
            waiter.resume()
        }
    }

    struct SourceDown: Error, CustomStringConvertible {
        var description: String { "the source is down" }
    }
}

@Suite("KeyRefetcher: shared, rate-limited key fetches")
struct KeyRefetcherTests {
    static func refetcher(_ source: GatedSource, clock: ManualClock, logs: LogRecorder) -> KeyRefetcher<[String]> {
        KeyRefetcher(
            source: "https://keys.example/jwks",
            minimumInterval: .seconds(10),
            clock: clock,
            logger: .recording(to: logs),
            failure: "cannot fetch keys"
        ) { try await source.load() }
    }

    /// Waits (yielding, not sleeping) until `condition` holds.
    static func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test("200 callers at once share one fetch and all get its keys")
    func shared() async {
        let source = GatedSource()
        let refetcher = Self.refetcher(source, clock: ManualClock(), logs: LogRecorder())
        await withTaskGroup(of: [String]?.self) { group in
            for _ in 0..<200 { group.addTask { await refetcher.fetch() } }
            while await refetcher.waitingCallers < 200 { await Task.yield() }
            #expect(source.waiting == 1)
            source.release()
            for await keys in group { #expect(keys == ["key-1"]) }
        }
        #expect(source.count == 1)
    }

    @Test("fetchIfDue fetches at most once per interval on the injected clock; fetch() always fetches")
    func rateLimit() async {
        let source = GatedSource()
        let clock = ManualClock()
        let refetcher = Self.refetcher(source, clock: clock, logs: LogRecorder())
        async let first = refetcher.fetchIfDue()
        await Self.until { source.waiting == 1 }
        source.release()
        #expect(await first == ["key-1"])
        clock.advance(by: .seconds(9))
        #expect(await refetcher.fetchIfDue() == nil, "9 s after the last fetch: too soon")
        #expect(source.count == 1)
        clock.advance(by: .seconds(1))
        async let due = refetcher.fetchIfDue()
        await Self.until { source.waiting == 1 }
        source.release()
        #expect(await due == ["key-2"])
        async let forced = refetcher.fetch()
        await Self.until { source.waiting == 1 }
        source.release()
        #expect(await forced == ["key-3"], "an explicit fetch is not rate-limited")
        #expect(await refetcher.sinceLastFetch == .zero)
    }

    @Test("a failed fetch answers nil and logs one error line naming the source and the error")
    func failure() async {
        let source = GatedSource()
        let logs = LogRecorder()
        let refetcher = Self.refetcher(source, clock: ManualClock(), logs: logs)
        source.failNext(true)
        async let failed = refetcher.fetch()
        await Self.until { source.waiting == 1 }
        source.release()
        #expect(await failed == nil)
        #expect(logs.lines.count == 1)
        let line = logs.lines.first ?? ""
        #expect(line.hasPrefix("error cannot fetch keys"), "\(line)")
        #expect(line.contains("https://keys.example/jwks") && line.contains("the source is down"), "\(line)")
    }
}
