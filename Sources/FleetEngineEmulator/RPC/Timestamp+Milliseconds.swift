import FleetAuthCore
import Foundation
import SwiftProtobuf

extension Google_Protobuf_Timestamp {
    /// `date` to the millisecond, rounded down: the precision of every time the emulator sets (as Fleet Engine's
    /// `serverTime` has), written in JSON with three fractional digits or none.
    init(milliseconds date: Date) {
        let milliseconds = date.epochMilliseconds
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        self.init(seconds: seconds, nanos: Int32(milliseconds - seconds * 1000) * 1_000_000)
    }
}
