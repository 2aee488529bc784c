/// Which strings a store can hold and compare exactly.
///
/// PostgreSQL's `text` cannot hold U+0000, and a string bound to SQLite through a C string ends at its first NUL —
/// so `"dana\u{0}x"` would be looked up as `"dana"`. A string with NUL therefore names nothing stored: lookups find
/// nothing, changes to it are `not_found`, and it is never written.
package enum StoredText {
    /// Whether `text` can be stored and compared byte for byte.
    package static func isStorable(_ text: String) -> Bool { !text.utf8.contains(0) }
}
