import Foundation

/// Runs `body` on a thread of its own and waits for it without blocking: for work that holds a thread long — an RSA
/// key generation (a tenth of a second to seconds of CPU), a PKCS#11 login or key generation — which must never
/// occupy one of the few threads Swift concurrency runs every task on (two on a two-core server: blocking both
/// stalls every request of the process).
package func onThreadOfItsOwn<T: Sendable, E: Error>(
    _ body: @escaping @Sendable () throws(E) -> T
) async throws(E) -> T {
    let result: Result<T, E> = await withCheckedContinuation { continuation in
        Thread {
            do throws(E) {
                continuation.resume(returning: .success(try body()))
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }.start()
    }
    return try result.get()
}
