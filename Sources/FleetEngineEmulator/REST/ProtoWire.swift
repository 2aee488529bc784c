/// The few pieces of the protobuf wire format the REST transcoding writes itself: a string field set at a path of
/// field numbers, to be merged into a decoded request (a path variable, a field mask's path).
enum ProtoWire {
    /// `value` as the protobuf encoding of the string field at `numbers` (each but the last a singular message
    /// field).
    static func string(_ value: String, at numbers: ArraySlice<Int>) -> [UInt8] {
        var bytes = Array(value.utf8)
        for number in numbers.reversed() {
            bytes = varint(UInt64(number) << 3 | 2) + varint(UInt64(bytes.count)) + bytes
        }
        return bytes
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
        return bytes
    }
}
