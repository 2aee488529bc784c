import Foundation

/// Wakes a reporter's loop: ``signal()`` on new input; ``pause(until:clock:)`` returns at the deadline, on input
/// (also input that came before it was called), or on cancellation, whichever comes first.
final class WakeSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var waiter: CheckedContinuation<Void, Never>?
    private var signaled = false

    /// New input: wakes the pause in progress, or the next one at once.
    func signal() {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if let waiter {
                self.waiter = nil
                return waiter
            }
            signaled = true
            return nil
        }
        waiting?.resume()
    }

    /// Returns at `deadline` (never, when `nil`), on input, or on cancellation.
    func pause<C: Clock>(until deadline: C.Instant?, clock: C) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForInput() }
            if let deadline {
                group.addTask { try? await clock.sleep(until: deadline, tolerance: nil) }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForInput() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = lock.withLock { () -> Bool in
                    if signaled || Task.isCancelled {
                        signaled = false
                        return true
                    }
                    waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                defer { waiter = nil }
                return waiter
            }
            waiting?.resume()
        }
    }
}
