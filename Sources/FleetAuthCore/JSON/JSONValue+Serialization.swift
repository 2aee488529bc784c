extension JSONValue {
    /// Compact JSON text, members in document order, `/` not escaped (as Google's libraries write tokens).
    public var jsonText: String {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        write(to: &output, indent: nil, level: 0)
        return String(decoding: output, as: UTF8.self)
    }

    /// UTF-8 bytes of ``jsonText``.
    public var jsonBytes: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        write(to: &output, indent: nil, level: 0)
        return output
    }

    /// Indented JSON text for people to read, members in document order.
    public func prettyText(indent: Int = 2) -> String {
        var output: [UInt8] = []
        write(to: &output, indent: indent, level: 0)
        return String(decoding: output, as: UTF8.self)
    }

    func write(to output: inout [UInt8], indent: Int?, level: Int) {
        switch self {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let value):
            output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value):
            output.append(contentsOf: String(value).utf8)
        case .double(let value):
            output.append(contentsOf: JSONValue.format(value).utf8)
        case .string(let value):
            JSONValue.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSONValue.newline(&output, indent: indent, level: level + 1)
                element.write(to: &output, indent: indent, level: level + 1)
            }
            if !elements.isEmpty { JSONValue.newline(&output, indent: indent, level: level) }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSONValue.newline(&output, indent: indent, level: level + 1)
                JSONValue.writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                if indent != nil { output.append(UInt8(ascii: " ")) }
                member.value.write(to: &output, indent: indent, level: level + 1)
            }
            if !object.members.isEmpty { JSONValue.newline(&output, indent: indent, level: level) }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ output: inout [UInt8], indent: Int?, level: Int) {
        guard let indent else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
    }

    private static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 {
            return String(Int64(value)) + ".0"
        }
        return "\(value)"
    }

    /// `string` as a JSON string: runs of bytes that need no escape are copied whole (a token or a key is one run).
    static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            output.reserveCapacity(output.count + bytes.count + 1)
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else {
                    continue
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                writeEscape(byte, to: &output)
                start = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func writeEscape(_ byte: UInt8, to output: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        default:
            output.append(contentsOf: "\\u00".utf8)
            output.append(hexDigits[Int(byte >> 4)])
            output.append(hexDigits[Int(byte & 0x0F)])
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

extension JSONObject {
    /// Compact JSON text of the object.
    public var jsonText: String { JSONValue.object(self).jsonText }
    /// UTF-8 bytes of the compact JSON text of the object.
    public var jsonBytes: [UInt8] { JSONValue.object(self).jsonBytes }
}
