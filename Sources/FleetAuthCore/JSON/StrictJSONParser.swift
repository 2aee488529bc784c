/// A strict RFC 8259 parser for the small JSON documents inside tokens and key files.
///
/// Foundation's parsers are too lenient for a security boundary (see the JSON rules of FleetAuthJWT's *Verification rules* article): on
/// Linux `JSONDecoder` takes the first of two duplicate names and `JSONSerialization` the last, both accept a
/// byte order mark and trailing commas. This parser refuses, with a ``JSONParseError``:
/// - anything but UTF-8 (invalid sequences, overlong forms, encoded surrogates), and a leading byte order mark;
/// - duplicate member names in any object, at any depth;
/// - trailing commas, comments, `NaN`, `Infinity`, leading zeros, a lone `-`, and any data after the value;
/// - numbers that do not fit a finite `Double` (`1e400`);
/// - unescaped control characters in strings, unknown escapes, and unpaired UTF-16 surrogate escapes;
/// - nesting deeper than ``maximumDepth`` (an error, never a stack overflow).
public struct StrictJSONParser: Sendable {
    /// The deepest nesting of objects and arrays accepted; the default is 32.
    public var maximumDepth: Int

    public init(maximumDepth: Int = 32) {
        self.maximumDepth = maximumDepth
    }

    /// Parses one JSON value that fills `bytes` (whitespace around it allowed).
    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var failure: JSONParseError?
        let value: JSONValue? = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONParseError) {
                return try parse(buffer: buffer)
            } catch {
                failure = error
                return nil
            }
        }
        guard let value else { throw failure! }
        return value
    }

    /// Parses a document that must be a JSON object.
    public func parseObject(_ bytes: [UInt8]) throws(JSONParseError) -> JSONObject {
        let value = try parse(bytes)
        guard case .object(let object) = value else { throw .notAnObject(value) }
        return object
    }

    /// Parses one JSON value that fills `bytes` (whitespace around it allowed).
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in try parse(buffer: buffer) }
        }
        if let result {
            return try result.get()
        }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(JSONParseError) in try parse(buffer: buffer) }
    }

    /// Parses a document that must be a JSON object.
    public func parseObject(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONObject {
        let value = try parse(bytes)
        guard case .object(let object) = value else { throw .notAnObject(value) }
        return object
    }

    /// Parses a document that must be a JSON object, from text.
    public func parseObject(_ text: String) throws(JSONParseError) -> JSONObject {
        try parseObject(Array(text.utf8))
    }

    func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF {
            throw .byteOrderMark
        }
        var cursor = Cursor(bytes: buffer, maximumDepth: maximumDepth)
        let value = try cursor.parseValue(depth: 0)
        cursor.skipWhitespace()
        if cursor.index != buffer.count {
            throw .trailingData(at: cursor.index)
        }
        return value
    }
}

private enum ASCII {
    static let quote: UInt8 = 0x22
    static let backslash: UInt8 = 0x5C
    static let slash: UInt8 = 0x2F
    static let comma: UInt8 = 0x2C
    static let colon: UInt8 = 0x3A
    static let minus: UInt8 = 0x2D
    static let plus: UInt8 = 0x2B
    static let dot: UInt8 = 0x2E
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let openBrace: UInt8 = 0x7B
    static let closeBrace: UInt8 = 0x7D
    static let openBracket: UInt8 = 0x5B
    static let closeBracket: UInt8 = 0x5D
    static let lowerE: UInt8 = 0x65
    static let upperE: UInt8 = 0x45
}

private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    @inline(__always)
    func peek() throws(JSONParseError) -> UInt8 {
        guard index < bytes.count else { throw .unexpectedEnd }
        return bytes[index]
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        switch try peek() {
        case ASCII.openBrace: return .object(try parseObject(depth: depth + 1))
        case ASCII.openBracket: return .array(try parseArray(depth: depth + 1))
        case ASCII.quote: return .string(try parseString())
        case 0x74: try expectLiteral("true"); return .bool(true)
        case 0x66: try expectLiteral("false"); return .bool(false)
        case 0x6E: try expectLiteral("null"); return .null
        case ASCII.minus, ASCII.zero...ASCII.nine: return try parseNumber()
        default: throw .unexpectedCharacter(at: index)
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw .unexpectedEnd }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw .unexpectedCharacter(at: index + offset)
        }
        index += count
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONObject {
        if depth > maximumDepth { throw .nestingTooDeep(limit: maximumDepth) }
        index += 1  // {
        var members: [JSONObject.Member] = []
        members.reserveCapacity(8)
        var seen: Set<String>? = nil
        skipWhitespace()
        if try peek() == ASCII.closeBrace {
            index += 1
            return JSONObject(uncheckedMembers: members)
        }
        while true {
            skipWhitespace()
            guard try peek() == ASCII.quote else { throw .unexpectedCharacter(at: index) }
            let key = try parseString()
            // Small objects (every token header and claim set) are checked by a scan; large ones by a set.
            if members.count < 16 {
                for member in members where member.key == key {
                    throw .duplicateKey(key)
                }
            } else {
                if seen == nil { seen = Set(members.map(\.key)) }
                if seen!.insert(key).inserted == false { throw .duplicateKey(key) }
            }
            skipWhitespace()
            guard try peek() == ASCII.colon else { throw .unexpectedCharacter(at: index) }
            index += 1
            let value = try parseValue(depth: depth)
            members.append(JSONObject.Member(key: key, value: value))
            skipWhitespace()
            switch try peek() {
            case ASCII.comma:
                index += 1
            case ASCII.closeBrace:
                index += 1
                return JSONObject(uncheckedMembers: members)
            default:
                throw .unexpectedCharacter(at: index)
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        if depth > maximumDepth { throw .nestingTooDeep(limit: maximumDepth) }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == ASCII.closeBracket {
            index += 1
            return elements
        }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch try peek() {
            case ASCII.comma:
                index += 1
            case ASCII.closeBracket:
                index += 1
                return elements
            default:
                throw .unexpectedCharacter(at: index)
            }
        }
    }

    /// Reads a string starting at its opening quote.
    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        var nonASCII: UInt8 = 0
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            nonASCII |= byte
            if byte == ASCII.quote {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if nonASCII & 0x80 == 0 { return String(decoding: slice, as: UTF8.self) }
                return try makeString(slice, offset: start)
            }
            if byte == ASCII.backslash { break }
            if byte < 0x20 { throw .controlCharacter(at: index) }
            index += 1
        }
        guard index < bytes.count else { throw .unexpectedEnd }
        // Slow path: copy what was scanned, then decode escapes.
        var scratch = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw .unexpectedEnd }
            let byte = bytes[index]
            switch byte {
            case ASCII.quote:
                index += 1
                return try scratch.withUnsafeBufferPointer { buffer throws(JSONParseError) in
                    try makeString(buffer, offset: start)
                }
            case ASCII.backslash:
                try parseEscape(into: &scratch)
            case 0..<0x20:
                throw .controlCharacter(at: index)
            default:
                scratch.append(byte)
                index += 1
            }
        }
    }

    func makeString(_ slice: UnsafeBufferPointer<UInt8>, offset: Int) throws(JSONParseError) -> String {
        // Strict validation first (String(decoding:) would repair), then the specialized decoding path;
        // String(validating:as:) is generic over the encoding and measured slower here.
        if let bad = UTF8Validation.firstInvalidOffset(in: slice) {
            throw .invalidUTF8(at: offset + bad)
        }
        return String(decoding: slice, as: UTF8.self)
    }

    mutating func parseEscape(into scratch: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = index
        index += 1  // backslash
        let byte = try peek()
        index += 1
        switch byte {
        case ASCII.quote: scratch.append(ASCII.quote)
        case ASCII.backslash: scratch.append(ASCII.backslash)
        case ASCII.slash: scratch.append(ASCII.slash)
        case 0x62: scratch.append(0x08)  // b
        case 0x66: scratch.append(0x0C)  // f
        case 0x6E: scratch.append(0x0A)  // n
        case 0x72: scratch.append(0x0D)  // r
        case 0x74: scratch.append(0x09)  // t
        case 0x75:  // u
            let unit = try parseHex4()
            var scalarValue: UInt32
            switch unit {
            case 0xD800...0xDBFF:
                guard index + 1 < bytes.count, bytes[index] == ASCII.backslash, bytes[index + 1] == 0x75 else {
                    throw .loneSurrogate(at: escapeStart)
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate(at: escapeStart) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            case 0xDC00...0xDFFF:
                throw .loneSurrogate(at: escapeStart)
            default:
                scalarValue = UInt32(unit)
            }
            // Every value here is a valid scalar: surrogates were handled above.
            let scalar = Unicode.Scalar(scalarValue)!
            scratch.append(contentsOf: UTF8.encode(scalar)!)
        default:
            throw .invalidEscape(at: escapeStart)
        }
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw .unexpectedEnd }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw .invalidEscape(at: index)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == ASCII.minus {
            negative = true
            index += 1
        }
        // Integer part: 0 | [1-9][0-9]*
        guard index < bytes.count else { throw .unexpectedEnd }
        let firstDigit = bytes[index]
        guard firstDigit >= ASCII.zero && firstDigit <= ASCII.nine else { throw .unexpectedCharacter(at: index) }
        var magnitude: UInt64 = 0
        var overflow = false
        if firstDigit == ASCII.zero {
            index += 1
        } else {
            while index < bytes.count, bytes[index] >= ASCII.zero, bytes[index] <= ASCII.nine {
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(bytes[index] - ASCII.zero))
                magnitude = m2
                overflow = overflow || o1 || o2
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == ASCII.dot {
            isInteger = false
            index += 1
            try consumeDigits()
        }
        if index < bytes.count, bytes[index] == ASCII.lowerE || bytes[index] == ASCII.upperE {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == ASCII.plus || bytes[index] == ASCII.minus {
                index += 1
            }
            try consumeDigits()
        }
        if isInteger && !overflow {
            if negative {
                if magnitude <= UInt64(Int64.max) + 1 {
                    return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
                }
            } else if magnitude <= UInt64(Int64.max) {
                return .integer(Int64(magnitude))
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw .numberOutOfRange(at: start) }
        return .double(value)
    }

    mutating func consumeDigits() throws(JSONParseError) {
        let start = index
        while index < bytes.count, bytes[index] >= ASCII.zero, bytes[index] <= ASCII.nine {
            index += 1
        }
        if index == start {
            throw index < bytes.count ? .unexpectedCharacter(at: index) : .unexpectedEnd
        }
    }
}

/// Strict UTF-8 validation (RFC 3629): no overlong forms, no encoded surrogates, nothing above U+10FFFF.
public enum UTF8Validation {
    /// The offset of the first byte that starts an invalid sequence, or `nil` when all of `bytes` is valid UTF-8.
    public static func firstInvalidOffset(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        let count = bytes.count
        while i < count {
            let b0 = bytes[i]
            if b0 < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return i
            }
            guard i + length <= count else { return i }
            let b1 = bytes[i + 1]
            guard b1 >= lower && b1 <= upper else { return i }
            for k in 2..<max(2, length) where bytes[i + k] & 0xC0 != 0x80 {
                return i
            }
            i += length
        }
        return nil
    }

    /// Whether `bytes` is entirely valid UTF-8.
    public static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        if let result = bytes.withContiguousStorageIfAvailable({ firstInvalidOffset(in: $0) == nil }) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer { firstInvalidOffset(in: $0) == nil }
    }
}
