import Foundation

/// What both servers read from a request's text the same way, as bytes: it runs on every request.
package enum RequestText {
    /// The credential of a `Bearer` Authorization header (scheme case-insensitive, then a space), without the spaces
    /// and tabs around it; nil without a header or with another scheme.
    ///
    /// The emulator's Fleet Engine token check reads its header with its own `TokenAuthenticator.bearerToken`, which
    /// takes exactly one space after the scheme and nothing around the token.
    package static func bearerCredential(_ header: String?) -> String? {
        guard let header else { return nil }
        let scheme = "bearer ".utf8
        let bytes = header.utf8
        guard bytes.count > scheme.count,
            bytes.prefix(scheme.count).elementsEqual(scheme, by: { $0 == $1 || ($1 != 0x20 && $0 | 0x20 == $1) })
        else { return nil }
        let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        var credential = bytes.dropFirst(scheme.count)
        while let first = credential.first, isBlank(first) { credential = credential.dropFirst() }
        while let last = credential.last, isBlank(last) { credential = credential.dropLast() }
        return String(Substring(credential))
    }

    /// A path parameter percent-decoded once; nil when its percent-encoding is invalid. Most IDs hold no `%`, and
    /// Foundation's decoding costs more than the rest of a route's path handling, so it runs only when one does.
    package static func percentDecoded(_ raw: String) -> String? {
        raw.utf8.contains(UInt8(ascii: "%")) ? raw.removingPercentEncoding : raw
    }
}
