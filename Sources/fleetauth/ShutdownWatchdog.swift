import Dispatch
import FleetAuthServerCore
import Foundation
import NIOConcurrencyHelpers
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bounds a server's shutdown: from the first SIGTERM or SIGINT, the services have `limit` to stop; past it, the
/// process prints one line naming the services still running and exits with status 1. It runs on a dispatch queue of
/// its own, so a stuck task or a busy cooperative pool cannot delay it. It counts real time on purpose, the one
/// place the CLI does: it bounds how long the process takes to exit after a signal, which no injected clock stands
/// for, and the servers' clocks are among what it watches.
final class ShutdownWatchdog: Sendable {
    /// How long cancelled services get to stop after the grace period, before the watchdog ends the process.
    static let cancellationAllowance: Duration = .seconds(5)

    private let limit: Duration
    private let queue = DispatchQueue(label: "fleetauth.shutdown-watchdog")
    private struct State {
        var running: [Int: String] = [:]
        var nextID = 0
        var sources = SignalSources()
        var armed = false
        var finished = false
    }
    private let state = NIOLockedValueBox(State())

    init(limit: Duration) {
        self.limit = limit
    }

    /// `service`, reported by name while its `run()` has not returned.
    func tracking(_ service: any Service) -> any Service {
        Tracked(base: service, watchdog: self)
    }

    /// Starts the countdown at the first of `signals` (the group's own handling of them is unchanged).
    func arm(on signals: [Int32]) {
        let sources = signals.map { signal in
            let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
            source.setEventHandler { [weak self] in self?.signalled(signal) }
            source.resume()
            return source
        }
        state.withLockedValue { $0.sources = SignalSources(sources: sources) }
    }

    /// The services stopped: nothing more to watch.
    func disarm() {
        let sources = state.withLockedValue { state in
            state.finished = true
            defer { state.sources = SignalSources() }
            return state.sources
        }
        for source in sources.sources { source.cancel() }
    }

    private func signalled(_ signal: Int32) {
        let first = state.withLockedValue { state in
            defer { state.armed = true }
            return !state.armed && !state.finished
        }
        guard first else { return }
        let (seconds, attoseconds) = limit.components
        let delay = DispatchTimeInterval.milliseconds(Int(seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.expired() }
    }

    private func expired() {
        let stuck = state.withLockedValue { state in state.finished ? nil : state.running.values.sorted() }
        guard let stuck else { return }
        let names = stuck.isEmpty ? "the server" : stuck.joined(separator: ", ")
        let line = "Error: shutdown did not finish within \(limit) of the signal: \(names) did not stop; exiting."
        if LogFormat.active == .json {
            LogFormat.fail(line)
        } else {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        exit(1)
    }

    fileprivate func started(_ name: String) -> Int {
        state.withLockedValue { state in
            state.nextID += 1
            state.running[state.nextID] = name
            return state.nextID
        }
    }

    fileprivate func stopped(_ id: Int) {
        _ = state.withLockedValue { $0.running.removeValue(forKey: id) }
    }
}

/// The dispatch sources of the signals watched: kept only under the watchdog's lock, and only to be cancelled.
private struct SignalSources: @unchecked Sendable {
    var sources: [any DispatchSourceSignal] = []
}

/// A service whose run is reported to the watchdog.
private struct Tracked: Service {
    let base: any Service
    let watchdog: ShutdownWatchdog

    var name: String {
        (base as? any CustomStringConvertible)?.description ?? String(describing: type(of: base))
    }

    func run() async throws {
        let id = watchdog.started(name)
        defer { watchdog.stopped(id) }
        try await base.run()
    }
}
