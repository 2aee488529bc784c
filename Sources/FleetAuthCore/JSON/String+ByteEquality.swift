import Foundation

extension String {
    /// Whether the two strings have the same UTF-8 bytes.
    ///
    /// Swift's `==` compares by canonical equivalence, so `"\u{E9}" == "e\u{301}"` and `"K" == "\u{212A}"` (Kelvin
    /// sign). Identifiers from tokens and paths must match exactly, never after normalization
    /// (rule A6 of FleetAuthJWT's *Verification rules* article).
    public func hasSameBytes(as other: String) -> Bool {
        var lhs = self
        var rhs = other
        return lhs.withUTF8 { a in
            rhs.withUTF8 { b in
                a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
            }
        }
    }
}
