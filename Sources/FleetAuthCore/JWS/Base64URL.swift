/// Canonical base64url (RFC 4648 §5) without padding, as JWS requires (RFC 7515 §2).
///
/// The decoder is strict: it accepts exactly the strings the encoder can produce.
/// - only `A–Z a–z 0–9 - _`; no `=`, `+`, `/`, whitespace or line breaks;
/// - a length that is not `1 (mod 4)`;
/// - zero unused bits in the last character, so `QUJDRA` decodes but `QUJDRB` does not.
///
/// The last rule matters for tokens: without it sixteen different strings decode to the same RS256 signature,
/// which defeats caches and deny-lists keyed by the token string.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let result = bytes.withContiguousStorageIfAvailable({ encode(bytes: $0) }) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer { encode(bytes: $0) }
    }

    /// Encodes the bytes in `input` as unpadded base64url, three bytes to four characters at a time.
    public static func encode(bytes input: UnsafeBufferPointer<UInt8>) -> String {
        let count = input.count
        let remainder = count % 3
        let length = count / 3 * 4 + (remainder == 0 ? 0 : remainder + 1)
        guard length > 0 else { return "" }
        return alphabet.withUnsafeBufferPointer { table in
            String(unsafeUninitializedCapacity: length) { output in
                var index = 0
                var written = 0
                while index + 3 <= count {
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[written] = table[Int(group >> 18)]
                    output[written + 1] = table[Int(group >> 12 & 0x3F)]
                    output[written + 2] = table[Int(group >> 6 & 0x3F)]
                    output[written + 3] = table[Int(group & 0x3F)]
                    index += 3
                    written += 4
                }
                if remainder > 0 {
                    var group = UInt32(input[index]) << 16
                    if remainder == 2 { group |= UInt32(input[index + 1]) << 8 }
                    output[written] = table[Int(group >> 18)]
                    output[written + 1] = table[Int(group >> 12 & 0x3F)]
                    if remainder == 2 { output[written + 2] = table[Int(group >> 6 & 0x3F)] }
                    written += remainder + 1
                }
                return written
            }
        }
    }

    /// Decodes canonical unpadded base64url; `nil` for anything else.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        if let result = text.utf8.withContiguousStorageIfAvailable({ decode(bytes: $0) }) {
            return result
        }
        return Array(text.utf8).withUnsafeBufferPointer { decode(bytes: $0) }
    }

    /// Decodes canonical unpadded base64url from UTF-8 bytes; `nil` for anything else.
    public static func decode(bytes input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        let remainder = count & 3
        if remainder == 1 { return nil }
        let outputCount = count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
            shiftedTables.withUnsafeBufferPointer { tables in
                let t0 = tables.baseAddress!, t1 = t0 + 256, t2 = t0 + 512, t3 = t0 + 768
                var o = 0
                var i = 0
                let whole = count - remainder
                var invalid: UInt32 = 0
                while i < whole {
                    // Each table holds the 6-bit value pre-shifted into place; 0x8000_0000 marks a foreign byte.
                    let v = t0[Int(input[i])] | t1[Int(input[i + 1])] | t2[Int(input[i + 2])] | t3[Int(input[i + 3])]
                    invalid |= v
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                    o += 3
                    i += 4
                }
                switch remainder {
                case 2:
                    let v = t0[Int(input[i])] | t1[Int(input[i + 1])]
                    invalid |= v | (v & 0x0000_F000 == 0 ? 0 : 0x8000_0000)
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                case 3:
                    let v = t0[Int(input[i])] | t1[Int(input[i + 1])] | t2[Int(input[i + 2])]
                    invalid |= v | (v & 0x0000_00C0 == 0 ? 0 : 0x8000_0000)
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                default:
                    break
                }
                valid = invalid & 0x8000_0000 == 0
            }
            initialized = outputCount
        }
        return valid ? output : nil
    }

    /// Four 256-entry tables: the 6-bit value of each alphabet byte shifted to its place in a 24-bit group
    /// (18, 12, 6, 0 bits), and 0x8000_0000 for every other byte.
    private static let shiftedTables: [UInt32] = {
        var tables = [UInt32](repeating: 0x8000_0000, count: 1024)
        for (index, byte) in alphabet.enumerated() {
            for position in 0..<4 {
                tables[position * 256 + Int(byte)] = UInt32(index) << UInt32(18 - 6 * position)
            }
        }
        return tables
    }()

    /// Whether `byte` belongs to the base64url alphabet.
    @inline(__always)
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        shiftedTables[Int(byte)] & 0x8000_0000 == 0
    }

    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8
    )

}
