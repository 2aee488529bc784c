public import Foundation

extension Date {
    /// Whole seconds since 1970, rounded down: the unit of JWT times and of stored timestamps.
    public var epochSeconds: Int64 { Int64(timeIntervalSince1970.rounded(.down)) }

    /// The time `seconds` whole seconds after 1970.
    public init(epochSeconds seconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(seconds))
    }
}

extension Date {
    /// Whole milliseconds since 1970, rounded down.
    public var epochMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The time `milliseconds` whole milliseconds after 1970.
    public init(epochMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}
