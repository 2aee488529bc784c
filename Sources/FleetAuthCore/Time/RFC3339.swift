public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// RFC 3339 timestamps as the proto3 JSON mapping writes them (`2026-11-21T20:02:13.123Z`, offsets allowed).
public enum RFC3339 {
    /// Parsing is rare (request validation, search staleness); the formatters are shared under a lock, because
    /// creating one costs far more than using it.
    private static let lock = NSLock()
    nonisolated(unsafe) private static let withFraction: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
    nonisolated(unsafe) private static let plain: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter
    }()

    /// The date `text` names, with or without fractional seconds; `nil` when it is not RFC 3339.
    public static func parse(_ text: String) -> Date? {
        lock.withLock { withFraction.date(from: text) ?? plain.date(from: text) }
    }

    /// UTC with milliseconds, `2026-11-21T20:02:13.123Z`: formatted by hand, since it is on every location update.
    public static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds.quotientAndRemainderFlooring(by: 1000).quotient)
        let fraction = milliseconds.quotientAndRemainderFlooring(by: 1000).remainder
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(width - digits.count, 0)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(fraction), 3))Z"
    }
}

extension Int64 {
    fileprivate func quotientAndRemainderFlooring(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }
}
