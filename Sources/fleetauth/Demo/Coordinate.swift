import Foundation

/// A point on the demo's map, and the flat-earth geometry a few kilometres of driving needs.
struct Coordinate: Sendable, Hashable {
    /// Metres per degree of latitude.
    static let metresPerDegree = 111_320.0

    var latitude: Double
    var longitude: Double

    /// The point `north` and `east` metres away.
    func offset(north: Double, east: Double) -> Coordinate {
        Coordinate(
            latitude: latitude + north / Self.metresPerDegree,
            longitude: longitude + east / (Self.metresPerDegree * cos(latitude * .pi / 180))
        )
    }

    /// The point `metres` further towards `target` (or `target` itself, when it is that close), and whether it
    /// was reached.
    func step(towards target: Coordinate, metres: Double) -> (position: Coordinate, arrived: Bool) {
        let north = (target.latitude - latitude) * Self.metresPerDegree
        let east = (target.longitude - longitude) * Self.metresPerDegree * cos(latitude * .pi / 180)
        let distance = (north * north + east * east).squareRoot()
        if distance <= metres { return (target, true) }
        return (offset(north: north / distance * metres, east: east / distance * metres), false)
    }
}
