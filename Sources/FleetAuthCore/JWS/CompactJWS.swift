import Foundation

/// A JWS in compact serialization (`header.payload.signature`), decoded strictly and **not verified**.
///
/// Use it to read a token (for display, or to route it to the right verifier); trust nothing in it until a
/// verifier has checked the signature. Decoding refuses, in this order and before any JSON work:
/// 1. tokens longer than `maximumLength` bytes (default 8 KiB: rule D1 of FleetAuthJWT's *Verification rules* article);
/// 2. any byte outside `A–Z a–z 0–9 - _ .` (JSON serialization, spaces, padding, `+ /`);
/// 3. a segment count other than three (JWE has five), and empty segments (signature stripping);
/// 4. non-canonical base64url (``Base64URL``);
/// 5. a header that is not a strict JSON object (``StrictJSONParser``).
///
/// The payload is kept as bytes: a JWS payload need not be JSON. ``payloadObject(parser:)`` parses it with the same
/// strict parser, so the bytes that were signed are the bytes that are read.
public struct CompactJWS: Sendable {
    /// The default largest token accepted, in bytes.
    public static let defaultMaximumLength = 8192

    /// The token text.
    public let compact: String
    /// The protected header.
    public let header: JSONObject
    /// The decoded header bytes (UTF-8 JSON).
    public let headerBytes: [UInt8]
    /// The decoded payload bytes.
    public let payload: [UInt8]
    /// The decoded signature bytes.
    public let signature: [UInt8]
    /// Length in bytes of the signing input, `BASE64URL(header) "." BASE64URL(payload)`, at the start of ``compact``.
    public let signingInputLength: Int

    /// Decodes `token`; see the type's documentation for what is refused.
    public init(
        _ token: String,
        maximumLength: Int = CompactJWS.defaultMaximumLength,
        parser: StrictJSONParser = StrictJSONParser()
    ) throws(JWSDecodingError) {
        var compact = token
        var failure: JWSDecodingError?
        let parts: Parts? = compact.withUTF8 { bytes in
            do throws(JWSDecodingError) {
                return try Self.split(bytes, maximumLength: maximumLength)
            } catch {
                failure = error
                return nil
            }
        }
        guard let parts else { throw failure! }
        self.compact = compact
        self.headerBytes = parts.header
        self.payload = parts.payload
        self.signature = parts.signature
        self.signingInputLength = parts.signingInputLength
        do {
            self.header = try parser.parseObject(parts.header)
        } catch {
            throw .invalidHeader(error)
        }
    }

    /// Decodes a token held in a substring (a line of a file, a header value).
    public init(
        _ token: Substring,
        maximumLength: Int = CompactJWS.defaultMaximumLength,
        parser: StrictJSONParser = StrictJSONParser()
    ) throws(JWSDecodingError) {
        guard token.utf8.count <= maximumLength else { throw .tooLarge(token.utf8.count, limit: maximumLength) }
        try self.init(String(token), maximumLength: maximumLength, parser: parser)
    }

    /// The ASCII text the signature covers.
    public var signingInput: Substring {
        compact[..<compact.utf8.index(compact.utf8.startIndex, offsetBy: signingInputLength)]
    }

    /// Calls `body` with the signing input's bytes, without copying them.
    public func withSigningInput<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var compact = self.compact
        return try compact.withUTF8 { bytes in
            try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[0..<signingInputLength])))
        }
    }

    /// The header's `alg`, if it is a string.
    public var algorithm: String? { header["alg"]?.stringValue }
    /// The header's `kid`, if it is a string.
    public var keyID: String? { header["kid"]?.stringValue }

    /// The payload parsed as a strict JSON object (a JWT claims set).
    public func payloadObject(parser: StrictJSONParser = StrictJSONParser()) throws(JSONParseError) -> JSONObject {
        try parser.parseObject(payload)
    }

    private struct Parts {
        var header: [UInt8]
        var payload: [UInt8]
        var signature: [UInt8]
        var signingInputLength: Int
    }

    private static func split(_ bytes: UnsafeBufferPointer<UInt8>, maximumLength: Int) throws(JWSDecodingError) -> Parts
    {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .empty }
        guard bytes.count <= maximumLength else { throw .tooLarge(bytes.count, limit: maximumLength) }
        // Find the separators with memchr; the base64url decoder checks every other byte.
        func dot(after start: Int) -> Int? {
            guard start < bytes.count, let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start)
            else {
                return nil
            }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        let first = dot(after: 0)
        let second = first.flatMap { dot(after: $0 + 1) }
        guard let first, let second, dot(after: second + 1) == nil else {
            if let bad = firstInvalidCharacter(bytes) { throw .invalidCharacter(at: bad) }
            throw .wrongSegmentCount(bytes.reduce(1) { $0 + ($1 == UInt8(ascii: ".") ? 1 : 0) })
        }
        // A byte outside the alphabet anywhere is reported as such, before any segment's own problem.
        func segment(_ start: Int, _ end: Int, _ name: String) throws(JWSDecodingError) -> [UInt8] {
            if start < end, let decoded = Base64URL.decode(bytes: UnsafeBufferPointer(rebasing: bytes[start..<end])) {
                return decoded
            }
            if let bad = firstInvalidCharacter(bytes) { throw .invalidCharacter(at: bad) }
            throw start == end ? .emptySegment(name) : .invalidBase64URL(name)
        }
        return Parts(
            header: try segment(0, first, "header"),
            payload: try segment(first + 1, second, "payload"),
            signature: try segment(second + 1, bytes.count, "signature"),
            signingInputLength: second
        )
    }

    /// The offset of the first byte outside `A–Z a–z 0–9 - _ .` (error path only).
    private static func firstInvalidCharacter(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        bytes.firstIndex { $0 != UInt8(ascii: ".") && !Base64URL.isAlphabet($0) }
    }
}
