import FleetAuthCore
import Foundation

/// A PKCS#11 URI (RFC 7512) naming a key in a PKCS#11 token, the convention OpenSSL, GnuTLS and p11-kit use:
///
/// ```
/// pkcs11:token=fleet;object=driver?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/secrets/pin
/// ```
///
/// Path attributes (separated by `;`) select the token and the object: `token`, `manufacturer`, `model`, `serial`,
/// `slot-id`, `object`, `id` (the `CKA_ID` bytes, percent-encoded), `type` (only `private` makes sense for a
/// signing key). Query attributes (separated by `&`) say how to reach it: `module-path` (required here: the
/// module's file), `pin-value` or `pin-source` (a file whose first line is the PIN: `file:/path` or `/path`).
/// Values are percent-decoded once. Unknown attributes are refused, except vendor attributes starting with `x-`,
/// so a typo never selects a different key. ``description`` never shows the PIN, and neither does an error: every
/// attribute whose name is a PIN (`PIN-VALUE`, `pin%2Dvalue`, one after a `;`) is redacted from the text it shows.
public struct PKCS11URI: Sendable, Hashable, CustomStringConvertible {
    /// The token's label (`token=`).
    public var token: String?
    /// The token's manufacturer ID (`manufacturer=`).
    public var manufacturer: String?
    /// The token's model (`model=`).
    public var model: String?
    /// The token's serial number (`serial=`).
    public var serial: String?
    /// The slot's ID (`slot-id=`).
    public var slotID: UInt?
    /// The object's label, `CKA_LABEL` (`object=`).
    public var object: String?
    /// The object's ID bytes, `CKA_ID` (`id=`).
    public var id: [UInt8]?
    /// The object's type (`type=`), if given.
    public var type: String?
    /// The module's file (`module-path=`).
    public var modulePath: String
    /// The PIN given in the URI (`pin-value=`).
    public var pinValue: String?
    /// Where to read the PIN (`pin-source=`).
    public var pinSource: String?

    /// Parses `text`; the error names the attribute at fault.
    public init(_ text: String) throws(SigningError) {
        guard text.hasPrefix("pkcs11:") else {
            throw Self.malformed(text, "must start with \"pkcs11:\"")
        }
        let body = text.dropFirst("pkcs11:".count)
        let (pathPart, queryPart): (Substring, Substring?) =
            if let mark = body.firstIndex(of: "?") {
                (body[..<mark], body[body.index(after: mark)...])
            } else {
                (body, nil)
            }
        var path: [String: String] = [:]
        for item in pathPart.split(separator: ";", omittingEmptySubsequences: true) {
            let (name, value) = try Self.attribute(item, in: text)
            guard path.updateValue(value, forKey: name) == nil else { throw Self.malformed(text, "repeats \(name)") }
        }
        var query: [String: String] = [:]
        for item in (queryPart ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let (name, value) = try Self.attribute(item, in: text)
            guard query.updateValue(value, forKey: name) == nil else { throw Self.malformed(text, "repeats \(name)") }
        }
        let pathNames: Set = [
            "token", "manufacturer", "model", "serial", "slot-id", "object", "id", "type", "library-manufacturer",
            "library-description", "library-version", "slot-manufacturer", "slot-description",
        ]
        for name in path.keys where !pathNames.contains(name) && !name.hasPrefix("x-") {
            throw Self.malformed(text, "has an unknown path attribute \"\(name)\"")
        }
        let queryNames: Set = ["module-path", "module-name", "pin-value", "pin-source"]
        for name in query.keys where !queryNames.contains(name) && !name.hasPrefix("x-") {
            throw Self.malformed(text, "has an unknown query attribute \"\(name)\"")
        }
        // A PIN inside another value (`module-path=/x.so;pin-value=…`, a `;` where `&` was meant) would be shown
        // wherever that value is: refuse it, naming the attribute only.
        for (name, value) in path.merging(query, uniquingKeysWith: { first, _ in first })
        where name != "pin-value" && SecretRedaction.redacted(value) != value {
            throw Self.malformed(
                text,
                "has what looks like a PIN or a token inside \(name) (query attributes are separated by &)"
            )
        }
        guard let modulePath = query["module-path"], !modulePath.isEmpty else {
            throw Self.malformed(text, "needs module-path=/path/to/the/module.so (the PKCS#11 library to load)")
        }
        if let type = path["type"], type != "private" {
            throw Self.malformed(text, "names type=\(type); a signing key is type=private")
        }
        if query["pin-value"] != nil, query["pin-source"] != nil {
            throw Self.malformed(text, "gives both pin-value and pin-source")
        }
        if let slot = path["slot-id"] {
            guard let number = UInt(slot) else { throw Self.malformed(text, "has a slot-id that is not a number") }
            slotID = number
        }
        token = path["token"]
        manufacturer = path["manufacturer"]
        model = path["model"]
        serial = path["serial"]
        object = path["object"]
        id = path["id"].map { Array($0.utf8) }
        if let raw = Self.rawValue(of: "id", in: pathPart) { id = Self.percentDecodedBytes(raw) }
        type = path["type"]
        self.modulePath = modulePath
        pinValue = query["pin-value"]
        pinSource = query["pin-source"]
        guard object != nil || id != nil else {
            throw Self.malformed(text, "needs object=LABEL or id=BYTES to name the key")
        }
    }

    /// The PIN: `pin-value`, or the first line of the `pin-source` file; nil when neither is given.
    public func pin() throws(SigningError) -> String? {
        if let pinValue { return pinValue }
        guard let pinSource else { return nil }
        let path = pinSource.hasPrefix("file:") ? String(pinSource.dropFirst("file:".count)) : pinSource
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .configuration("The PIN file \(path) (pin-source of the PKCS#11 URI) cannot be read.")
        }
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }

    /// The URI with `pin-value` hidden.
    public var description: String {
        var path: [String] = []
        if let token { path.append("token=\(Self.encode(token))") }
        if let manufacturer { path.append("manufacturer=\(Self.encode(manufacturer))") }
        if let model { path.append("model=\(Self.encode(model))") }
        if let serial { path.append("serial=\(Self.encode(serial))") }
        if let slotID { path.append("slot-id=\(slotID)") }
        if let object { path.append("object=\(Self.encode(object))") }
        if let id { path.append("id=" + id.map { String(format: "%%%02X", $0) }.joined()) }
        if let type { path.append("type=\(type)") }
        var query = ["module-path=\(Self.encode(modulePath))"]
        if pinValue != nil { query.append("pin-value=REDACTED") }
        if let pinSource { query.append("pin-source=\(Self.encode(pinSource))") }
        return "pkcs11:" + path.joined(separator: ";") + "?" + query.joined(separator: "&")
    }

    private static func attribute(_ item: Substring, in text: String) throws(SigningError) -> (String, String) {
        guard let equals = item.firstIndex(of: "=") else {
            throw malformed(text, "has \"\(item.prefix(40))\", which is not NAME=VALUE")
        }
        let name = String(item[..<equals])
        let raw = item[item.index(after: equals)...]
        guard let bytes = percentDecodedBytes(raw) else {
            throw malformed(text, "has a bad percent-encoding in \(name)")
        }
        return (name, String(decoding: bytes, as: UTF8.self))
    }

    private static func rawValue(of name: String, in path: Substring) -> Substring? {
        for item in path.split(separator: ";") where item.hasPrefix(name + "=") {
            return item.dropFirst(name.count + 1)
        }
        return nil
    }

    private static func percentDecodedBytes(_ raw: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = raw.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/:@!$'()*+")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// A parse error; the URI is shown with every PIN-like attribute redacted, whatever its spelling.
    private static func malformed(_ text: String, _ problem: String) -> SigningError {
        .configuration(SecretRedaction.redacted("The PKCS#11 URI \(text.prefix(300)) \(problem)."))
    }
}
