package import Foundation

#if canImport(FoundationNetworking)
    package import FoundationNetworking
#endif

extension URLSession {
    /// `data(for:)`, but safe to cancel on Linux.
    ///
    /// On Apple platforms this is `data(for:)`. On Linux, swift-corelibs-foundation's `URLSessionTask.cancel()`
    /// races with the task's own completion: a cancel that lands as the answer arrives aborts the process
    /// ("Trying to access a behaviour for a task that in not in the registry", `TaskRegistry.swift`). So there a
    /// cancelled caller is answered at once with `CancellationError` and the request is abandoned, not cancelled:
    /// it runs on until its answer or its `timeoutInterval`, and its result is dropped.
    package func cancellationSafeData(for request: URLRequest) async throws -> (Data, URLResponse) {
        #if canImport(FoundationNetworking)
            let call = AbandonableCall()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    guard call.wait(continuation) else { return }
                    let task = self.dataTask(with: request) { data, response, error in
                        if let data, let response {
                            call.finish(.success((data, response)))
                        } else {
                            call.finish(.failure(error ?? URLError(.badServerResponse)))
                        }
                    }
                    task.resume()
                }
            } onCancel: {
                call.abandon()
            }
        #else
            return try await data(for: request)
        #endif
    }
}

#if canImport(FoundationNetworking)
    /// One caller waiting for one data task; whichever of the answer and the caller's cancellation comes first wins.
    ///
    /// Its state is under an `NSLock`, not a `Mutex`: this code runs only on Linux, where ThreadSanitizer cannot see
    /// a contended `Mutex` hand over (the kernel does it) and reports a race where there is none.
    private final class AbandonableCall: @unchecked Sendable {
        typealias Continuation = CheckedContinuation<(Data, URLResponse), any Error>
        fileprivate enum State {
            case idle
            case waiting(Continuation)
            case cancelled
            case done
        }

        private let lock = NSLock()
        private var state = State.idle

        /// Stores the continuation; false (having resumed it with `CancellationError`) if the caller already left.
        func wait(_ continuation: Continuation) -> Bool {
            let cancelled: Bool = lock.withLock {
                if case .cancelled = state {
                    state = .done
                    return true
                }
                state = .waiting(continuation)
                return false
            }
            if cancelled { continuation.resume(throwing: CancellationError()) }
            return !cancelled
        }

        func finish(_ result: Result<(Data, URLResponse), any Error>) {
            take()?.resume(with: result)
        }

        func abandon() {
            take(cancelling: true)?.resume(throwing: CancellationError())
        }

        private func take(cancelling: Bool = false) -> Continuation? {
            lock.withLock {
                switch state {
                case .waiting(let continuation):
                    state = .done
                    return continuation
                case .idle:
                    if cancelling { state = .cancelled }
                    return nil
                case .cancelled, .done:
                    return nil
                }
            }
        }
    }
#endif
