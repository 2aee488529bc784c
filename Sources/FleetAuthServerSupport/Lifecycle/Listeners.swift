import NIOConcurrencyHelpers
import NIOCore
package import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One socket a server listens on, as an operator names it: what it serves, where, and the option that moves it.
package struct Listener: Hashable, Sendable {
    /// What the socket serves, for messages (`the REST port`, `the gRPC port`).
    package var name: String
    package var host: String
    package var port: Int
    /// The command-line option (and environment variable) that changes the port, if there is one.
    package var option: String?

    package init(name: String, host: String, port: Int, option: String? = nil) {
        self.name = name
        self.host = host
        self.port = port
        self.option = option
    }
}

/// A listener that could not be bound: which, where, and why, in one line.
package struct ListenerError: Error, CustomStringConvertible {
    package var listener: Listener
    /// Why, in words (`address already in use`).
    package let reason: String

    package init(listener: Listener, underlying: any Error) {
        self.listener = listener
        self.reason = Self.reason(underlying)
    }

    package var description: String {
        var line = "Cannot listen on \(listener.host):\(listener.port) (\(listener.name)): \(reason)."
        if let option = listener.option { line += " Choose another address or port with \(option)." }
        return line
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)).lowercased() }
        if let error = error as? SocketAddressError.UnknownHost {
            return "cannot resolve the host name \(error.host) (\(error.errorDescription.lowercased()))"
        }
        if let error = error as? SocketAddressError {
            switch error {
            case .unknown(let host, _): return "cannot resolve the address \(host)"
            default: return "not an address: \(error)"
            }
        }
        return String(describing: error)
    }
}

/// Holds the announcements of a process's listeners back until every one is bound, so nothing says "listening"
/// while another socket may still fail, and turns a bind failure into a ``ListenerError``.
///
/// Each server's `onServerRunning` calls ``bound(_:port:)``; each server runs inside ``guarding(_:_:)``.
package final class ListenerStartup: Sendable {
    private struct State {
        var ports: [Listener: Int] = [:]
        var announced = false
    }
    private let listeners: [Listener]
    private let state = NIOLockedValueBox(State())
    private let onAllBound: @Sendable (_ ports: [(Listener, Int)]) async -> Void

    /// - Parameters:
    ///   - listeners: every socket the process opens.
    ///   - onAllBound: called once, when the last one is bound, with each listener's port in the given order.
    package init(_ listeners: [Listener], onAllBound: @escaping @Sendable (_ ports: [(Listener, Int)]) async -> Void) {
        self.listeners = listeners
        self.onAllBound = onAllBound
    }

    /// Records that `listener` listens on `port`, and announces them all once the last one is bound.
    package func bound(_ listener: Listener, port: Int) async {
        let ready: [(Listener, Int)]? = state.withLockedValue { state in
            state.ports[listener] = port
            guard !state.announced, listeners.allSatisfy({ state.ports[$0] != nil }) else { return nil }
            state.announced = true
            return listeners.map { ($0, state.ports[$0]!) }
        }
        if let ready { await onAllBound(ready) }
    }

    /// Whether `listener` has been bound.
    package func isBound(_ listener: Listener) -> Bool { state.withLockedValue { $0.ports[listener] != nil } }

    /// `service`, with a failure before `listener` is bound reported as a ``ListenerError``.
    package func guarding(_ service: any Service, _ listener: Listener) -> any Service {
        GuardedListener(base: service, listener: listener, startup: self)
    }
}

private struct GuardedListener: Service, CustomStringConvertible {
    let base: any Service
    let listener: Listener
    let startup: ListenerStartup

    /// The listener's name, for a shutdown that does not finish.
    var description: String { listener.name }

    func run() async throws {
        do {
            try await base.run()
        } catch {
            if startup.isBound(listener) || error is CancellationError { throw error }
            throw ListenerError(listener: listener, underlying: error)
        }
    }
}
