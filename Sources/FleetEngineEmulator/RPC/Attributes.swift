import FleetAuthServerCore
import FleetEngineAPI

/// Vehicle and trip attributes: checked and normalized when written, compared as strings when searched.
///
/// A `VehicleAttribute` carries its value twice: as `value` (a string) and as one typed value (`stringValue`,
/// `boolValue` or `numberValue`). The emulator keeps the two in step, as Fleet Engine answers them: a typed value
/// also fills `value` (`true`, `10`, `2.5`), a bare `value` also fills `stringValue`, and a request that gives both
/// must make them agree. Searches compare the string form, since Fleet Engine stores attributes as strings.
enum Attributes {
    /// The most attributes one vehicle or trip may have.
    static let maximumCount = 100
    /// The longest `key:value` pair.
    static let maximumPairLength = 256

    /// The string form of a typed value.
    static func string(_ value: Maps_Fleetengine_V1_VehicleAttribute.OneOf_VehicleAttributeValue) -> String {
        switch value {
        case .stringValue(let text): text
        case .boolValue(let flag): flag ? "true" : "false"
        case .numberValue(let number): format(number)
        }
    }

    /// A number as its shortest decimal form, without a trailing `.0` for integers.
    static func format(_ number: Double) -> String {
        if number.rounded() == number, abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    /// Checks attributes of any kind: at most ``maximumCount``, each key non-empty, without `:`, and given once.
    static func checkKeys(_ attributes: [some KeyedAttribute], field: String) throws(GoogleAPIError) {
        guard attributes.count <= maximumCount else {
            throw .invalidArgument("\(field) has \(attributes.count) attributes; at most \(maximumCount) are allowed.")
        }
        var keys = Set<String>()
        for (index, attribute) in attributes.enumerated() {
            let place = "\(field)[\(index)]"
            guard !attribute.key.isEmpty, !attribute.key.contains(":") else {
                throw .invalidArgument("\(place).key must be non-empty and without ':'.")
            }
            guard keys.insert(attribute.key).inserted else {
                throw .invalidArgument("\(place).key \"\(attribute.key)\" appears twice; each key may appear once.")
            }
        }
    }

    /// Checks a vehicle's or delivery vehicle's attributes (``checkKeys(_:field:)``) and keeps each one's `value`
    /// and typed value in step; `maximumPair` bounds `key:value` (on-demand vehicles).
    static func normalized<Attribute: TwiceValuedAttribute>(
        _ attributes: [Attribute],
        field: String,
        maximumPair: Int? = maximumPairLength
    ) throws(GoogleAPIError) -> [Attribute] {
        try checkKeys(attributes, field: field)
        var result: [Attribute] = []
        for (index, original) in attributes.enumerated() {
            var attribute = original
            let place = "\(field)[\(index)]"
            if let text = attribute.typedText {
                guard attribute.value.isEmpty || attribute.value == text else {
                    throw .invalidArgument(
                        "\(place) gives value \"\(attribute.value.prefix(100))\" and a typed value \"\(text.prefix(100))\"; they must agree."
                    )
                }
                attribute.value = text
            } else {
                attribute.stringValue = attribute.value
            }
            if let maximumPair, attribute.key.utf8.count + 1 + attribute.value.utf8.count > maximumPair {
                throw .invalidArgument("\(place): \"key:value\" is longer than \(maximumPair) bytes.")
            }
            result.append(attribute)
        }
        return result
    }

    /// Checks a trip's attributes (``checkKeys(_:field:)``): each needs a typed value.
    static func checkTripAttributes(_ attributes: [FleetEngineV1.TripAttribute], field: String)
        throws(GoogleAPIError)
    {
        try checkKeys(attributes, field: field)
        if let index = attributes.firstIndex(where: { $0.tripAttributeValue == nil }) {
            throw .invalidArgument("\(field)[\(index)] needs a value: stringValue, boolValue or numberValue.")
        }
    }

    /// The attributes as a dictionary of string forms.
    static func dictionary(_ attributes: [FleetEngineV1.VehicleAttribute]) -> [String: String] {
        var result: [String: String] = [:]
        for attribute in attributes {
            result[attribute.key] = attribute.vehicleAttributeValue.map(string) ?? attribute.value
        }
        return result
    }

    /// Whether `vehicle` has an attribute equal to `required` (same key, same string form).
    static func has(_ vehicle: [String: String], _ required: FleetEngineV1.VehicleAttribute) -> Bool {
        vehicle[required.key] == (required.vehicleAttributeValue.map(string) ?? required.value)
    }

    /// `key1:value1|key2:value2` as pairs; each pair needs a key and a `:`.
    static func pairs(_ text: String, field: String) throws(GoogleAPIError) -> [(key: String, value: String)] {
        var result: [(key: String, value: String)] = []
        for part in text.split(separator: "|", omittingEmptySubsequences: false) {
            guard let colon = part.firstIndex(of: ":"), colon != part.startIndex else {
                throw .invalidArgument("\(field) entries must be key:value (or key1:value1|key2:value2).")
            }
            result.append((String(part[..<colon]), String(part[part.index(after: colon)...])))
        }
        return result
    }
}

/// A Fleet Engine attribute message of any kind: its key.
protocol KeyedAttribute {
    var key: String { get }
}

/// An attribute that carries its value twice, as `value` and as one typed value (``Attributes``).
protocol TwiceValuedAttribute: KeyedAttribute {
    var value: String { get set }
    var stringValue: String { get set }
    /// The typed value's string form, if one is set.
    var typedText: String? { get }
}

extension FleetEngineV1.VehicleAttribute: TwiceValuedAttribute {
    var typedText: String? { vehicleAttributeValue.map(Attributes.string) }
}

extension FleetEngineDelivery.DeliveryVehicleAttribute: TwiceValuedAttribute {
    var typedText: String? { deliveryVehicleAttributeValue.map(DeliveryChecks.string) }
}

extension FleetEngineV1.TripAttribute: KeyedAttribute {}
extension FleetEngineDelivery.TaskAttribute: KeyedAttribute {}
