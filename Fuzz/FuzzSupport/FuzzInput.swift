import CFuzzDriver
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What every fuzz target shares: each input is run on a thread of its own with a small stack, so that recursion
/// without a bound overflows at hundreds of levels — within the inputs libFuzzer tries in a minute — rather than
/// at the tens of thousands an 8 MiB main thread allows. A bounded reader never comes near it.
public enum FuzzInput {
    /// Runs `body` with the input's bytes on a thread with a `stackSize`-byte stack, and waits for it.
    public static func run(
        _ data: UnsafePointer<UInt8>?,
        _ count: Int,
        stackSize: Int = 512 * 1024,
        _ body: @escaping @Sendable ([UInt8]) -> Void
    ) -> Int32 {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            // A stack of its own for signal handlers, so that libFuzzer's can report an overflow of this thread's
            // stack (and save the input) instead of faulting again on it.
            let alternate = UnsafeMutableRawPointer.allocate(byteCount: 256 * 1024, alignment: 16)
            var signalStack = stack_t(ss_sp: alternate, ss_flags: 0, ss_size: 256 * 1024)
            sigaltstack(&signalStack, nil)
            body(bytes)
            var disabled = stack_t(ss_sp: nil, ss_flags: Int32(SS_DISABLE), ss_size: 0)
            sigaltstack(&disabled, nil)
            alternate.deallocate()
            done.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        done.wait()
        return 0
    }

    /// The bytes as text, if they are UTF-8 (a reader of text gets nothing else from a transport).
    public static func text(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)
    }
}

extension FuzzInput {
    /// Runs libFuzzer with the program's arguments on `callback` (each target's `LLVMFuzzerTestOneInput`): what each
    /// target's `main` does, as SwiftPM names it.
    public static func main(
        _ argc: Int32,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32 {
        var argc = argc
        var argv = argv
        return LLVMFuzzerRunDriver(&argc, &argv, callback)
    }
}
