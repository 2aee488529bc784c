import Foundation

extension String {
    /// The string percent-encoded for use as one URL path segment (`/`, `?`, `#` and the like encoded too).
    var pathSegmentEncoded: String? {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#;:@&=+$,")
        return addingPercentEncoding(withAllowedCharacters: allowed)
    }
}
