import Foundation

/// Removes secrets from text that came from elsewhere before it is logged or shown: an upstream service's error
/// message (which a hostile or broken endpoint may fill with the caller's own bearer token), or a PKCS#11 URI that
/// failed to parse (which may carry a PIN in any spelling).
///
/// | what | example | becomes |
/// |---|---|---|
/// | a `Bearer` credential | `Bearer ya29.abc` | `Bearer [REDACTED]` |
/// | a Google access token | `ya29.a0Af…` | `[REDACTED]` |
/// | a JWT | `eyJhbGciOi….eyJ….sig` | `[REDACTED]` |
/// | a token field of JSON or a form | `"access_token":"…"`, `assertion=…` | the name, then `[REDACTED]` |
/// | an attribute whose name is a PIN, in any case, percent-encoding or separator (`pin-source`, a file name, is kept) | `&PIN-VALUE=1234`, `pin%2Dvalue=1234`, `.so;pin-value=1234` | the name, then `REDACTED` |
package enum SecretRedaction {
    /// `text` without the secrets the table lists.
    package static func redacted(_ text: String) -> String {
        var result = text
        // A PIN hidden behind percent-encoding is found in the decoded text, which is then the one shown.
        var decoded = text
        for _ in 0..<3 {
            guard decoded.contains("%"), let next = decoded.removingPercentEncoding, next != decoded else { break }
            decoded = next
        }
        if decoded != text, redactingPINs(decoded) != decoded { result = decoded }
        result = redactingPINs(result)
        for (pattern, template) in patterns {
            result = pattern.stringByReplacingMatches(
                in: result,
                range: NSRange(result.startIndex..., in: result),
                withTemplate: template
            )
        }
        return result
    }

    private static let patterns: [(NSRegularExpression, String)] = [
        (#"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]+"#, "$1 [REDACTED]"),
        (
            #"(?i)("?\b(?:access_token|accessToken|id_token|refresh_token|assertion|client_secret|signedJwt)"?\s*[:=]\s*"?)[^"&\s,}]+"#,
            "$1[REDACTED]"
        ),
        (#"ya29\.[A-Za-z0-9._-]+"#, "[REDACTED]"),
        (#"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"#, "[REDACTED]"),
    ].map { (try! NSRegularExpression(pattern: $0.0), $0.1) }

    private static let attribute = try! NSRegularExpression(
        pattern: #"([A-Za-z0-9_.-]+)\s*=\s*([^&;?\s"',]*)"#
    )

    /// Every `NAME=VALUE` whose name holds "pin" (but is not `pin-source`) with its value replaced.
    private static func redactingPINs(_ text: String) -> String {
        let matches = attribute.matches(in: text, range: NSRange(text.startIndex..., in: text))
        var result = text
        for match in matches.reversed() {
            // Later matches are replaced first, so this match's range is still the same in `result`.
            guard match.range(at: 2).length > 0, let nameRange = Range(match.range(at: 1), in: text),
                let valueRange = Range(match.range(at: 2), in: result)
            else { continue }
            let name = text[nameRange].lowercased()
            guard name.contains("pin"), name != "pin-source" else { continue }
            result.replaceSubrange(valueRange, with: "REDACTED")
        }
        return result
    }
}
