import Dispatch
import FleetAuthServerCore
import FleetAuthServerTesting
import Foundation
import Testing

@Suite("A result handed from another thread")
struct HandOffTests {
    struct Refused: Error, Equatable {}

    /// Built on the delivering thread, read by the caller: under ThreadSanitizer (`.ci/run` runs this suite with it)
    /// a plain continuation resumed before its caller awaits makes this a reported race.
    final class Built: @unchecked Sendable {
        var round = 0
    }

    /// Delivers `result` from another thread, `before` or after the caller awaits. The order is what matters, not
    /// the time: the delivering thread is not synchronized with the caller in any way the sanitizer could see, so
    /// the caller's thread is held in `start` for a while instead (if it is not held long enough, the other order
    /// is covered).
    static func deliver<T: Sendable>(_ result: @escaping @Sendable () -> Result<T, any Error>, before: Bool)
        async throws -> T
    {
        try await awaitHandOff { deliver in
            DispatchQueue.global().async { deliver(result()) }
            if before { Waiting.holdThread(.milliseconds(5)) }
        }
    }

    @Test(
        "a value built on another thread reaches the caller, delivered before or after it awaits",
        arguments: [true, false]
    )
    func values(before: Bool) async throws {
        for round in 1...10 {
            let built = try await Self.deliver(
                {
                    let built = Built()
                    built.round = round
                    return .success(built)
                },
                before: before
            )
            #expect(built.round == round)
        }
    }

    @Test("an error delivered is thrown to the caller", arguments: [true, false])
    func errors(before: Bool) async throws {
        await #expect(throws: Refused()) {
            try await Self.deliver({ () -> Result<Int, any Error> in .failure(Refused()) }, before: before)
        }
    }

    @Test("a result delivered on the caller's own thread, inside start, is returned; a hand-off that cannot fail")
    func synchronous() async {
        let value = await awaitHandOff { (deliver: @escaping @Sendable (Result<Int, Never>) -> Void) in
            deliver(.success(42))
        }
        #expect(value == 42)
    }
}
