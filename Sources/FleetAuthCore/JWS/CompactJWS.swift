/// A JWS in compact serialization (`header.payload.signature`), decoded strictly and **not verified**.
///
/// Use it to read a token (for display, or to route it to the right verifier); trust nothing in it until a
/// verifier has checked the signature. Decoding refuses, in this order and before any JSON work:
/// 1. tokens longer than `maximumLength` bytes (default 8 KiB, `reference/jwt-security.md` D1);
/// 2. any byte outside `A–Z a–z 0–9 - _ .` (JSON serialization, spaces, padding, `+ /`);
/// 3. a segment count other than three (JWE has five), and empty segments (signature stripping);
/// 4. non-canonical base64url (``Base64URL``);
/// 5. a header that is not a strict JSON object (``StrictJSONParser``).
///
/// The payload is kept as bytes: a JWS payload need not be JSON. ``payloadObject()`` parses it with the same
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
        _ token: some StringProtocol,
        maximumLength: Int = CompactJWS.defaultMaximumLength,
        parser: StrictJSONParser = StrictJSONParser()
    ) throws(JWSDecodingError) {
        var compact = String(token)
        let parts = try compact.withUTF8 { bytes in
            Result { () throws(JWSDecodingError) in try Self.split(bytes, maximumLength: maximumLength) }
        }.get()
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

    private static func split(_ bytes: UnsafeBufferPointer<UInt8>, maximumLength: Int) throws(JWSDecodingError) -> Parts {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= maximumLength else { throw .tooLarge(bytes.count, limit: maximumLength) }
        var dots: (Int, Int) = (-1, -1)
        var dotCount = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                switch dotCount {
                case 0: dots.0 = index
                case 1: dots.1 = index
                default: break
                }
                dotCount += 1
            } else if !Base64URL.isAlphabet(byte) {
                throw .invalidCharacter(at: index)
            }
        }
        guard dotCount == 2 else { throw .wrongSegmentCount(dotCount + 1) }
        let header = UnsafeBufferPointer(rebasing: bytes[0..<dots.0])
        let payload = UnsafeBufferPointer(rebasing: bytes[(dots.0 + 1)..<dots.1])
        let signature = UnsafeBufferPointer(rebasing: bytes[(dots.1 + 1)...])
        if header.isEmpty { throw .emptySegment("header") }
        if payload.isEmpty { throw .emptySegment("payload") }
        if signature.isEmpty { throw .emptySegment("signature") }
        guard let headerBytes = Base64URL.decode(bytes: header) else { throw .invalidBase64URL("header") }
        guard let payloadBytes = Base64URL.decode(bytes: payload) else { throw .invalidBase64URL("payload") }
        guard let signatureBytes = Base64URL.decode(bytes: signature) else { throw .invalidBase64URL("signature") }
        return Parts(header: headerBytes, payload: payloadBytes, signature: signatureBytes, signingInputLength: dots.1)
    }
}
