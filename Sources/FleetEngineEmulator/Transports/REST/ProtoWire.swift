import Foundation
import SwiftProtobuf

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

/// Whether every enum value set in a message, at any depth, fits the wire format's 32 bits. SwiftProtobuf's JSON
/// decoder keeps a larger number as an unrecognized value of an open enum, and its binary encoder cannot write one
/// (it traps): a message decoded from JSON is checked by this before it is ever serialized.
struct EnumRange: SwiftProtobuf.Visitor {
    private(set) var fits = true

    static func fits(_ message: some SwiftProtobuf.Message) -> Bool {
        var visitor = EnumRange()
        try? message.traverse(visitor: &visitor)
        return visitor.fits
    }

    private struct OutOfRange: Error {}

    mutating func visitSingularEnumField<E: SwiftProtobuf.Enum>(value: E, fieldNumber: Int) throws {
        guard Int32(exactly: value.rawValue) != nil else {
            fits = false
            throw OutOfRange()
        }
    }
    mutating func visitSingularMessageField<M: SwiftProtobuf.Message>(value: M, fieldNumber: Int) throws {
        try value.traverse(visitor: &self)
    }
    mutating func visitSingularDoubleField(value: Double, fieldNumber: Int) throws {}
    mutating func visitSingularInt64Field(value: Int64, fieldNumber: Int) throws {}
    mutating func visitSingularUInt64Field(value: UInt64, fieldNumber: Int) throws {}
    mutating func visitSingularBoolField(value: Bool, fieldNumber: Int) throws {}
    mutating func visitSingularStringField(value: String, fieldNumber: Int) throws {}
    mutating func visitSingularBytesField(value: Data, fieldNumber: Int) throws {}
    mutating func visitMapField<KeyType, ValueType: MapValueType>(
        fieldType: _ProtobufMap<KeyType, ValueType>.Type,
        value: _ProtobufMap<KeyType, ValueType>.BaseType,
        fieldNumber: Int
    ) throws {}
    mutating func visitMapField<KeyType, ValueType>(
        fieldType: _ProtobufEnumMap<KeyType, ValueType>.Type,
        value: _ProtobufEnumMap<KeyType, ValueType>.BaseType,
        fieldNumber: Int
    ) throws {
        for element in value.values where Int32(exactly: element.rawValue) == nil {
            fits = false
            throw OutOfRange()
        }
    }
    mutating func visitMapField<KeyType, ValueType>(
        fieldType: _ProtobufMessageMap<KeyType, ValueType>.Type,
        value: _ProtobufMessageMap<KeyType, ValueType>.BaseType,
        fieldNumber: Int
    ) throws {
        for element in value.values { try element.traverse(visitor: &self) }
    }
    mutating func visitUnknown(bytes: Data) throws {}
}
