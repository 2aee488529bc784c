import NIOConcurrencyHelpers

/// Suspends until the result `start` arranges is delivered, from whatever thread computes it, and returns it.
///
/// The batched stores answer their callers from a database thread or a batch leader, and the readiness probe from
/// a check's task, at times before the caller has reached its `await`. Swift's runtime then lets the caller go on at
/// once, past an atomic it does not declare to ThreadSanitizer (Swift 6.3 annotates only the path where the task
/// suspends), so a value built on the other thread — a decoded vehicle — looks raced to the sanitizer though it is
/// not. The result therefore travels through a lock, set before the resume and read after it: an edge the sanitizer
/// sees, for one uncontended lock per call.
package func awaitHandOff<T: Sendable, E: Error>(
    _ start: (_ deliver: @escaping @Sendable (Result<T, E>) -> Void) -> Void
) async throws(E) -> T {
    let slot = NIOLockedValueBox<Result<T, E>?>(nil)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        start { result in
            slot.withLockedValue { $0 = result }
            continuation.resume()
        }
    }
    guard let result = slot.withLockedValue({ $0 }) else { preconditionFailure("Resumed without a result.") }
    return try result.get()
}
