/// A JSON value as read by ``StrictJSONParser``.
///
/// Numbers keep the distinction the token rules need: a literal with no fraction and no exponent that fits in
/// 64 bits is an ``integer(_:)``; every other number is a finite ``double(_:)``.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an integer literal.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number, integer or not, as a `Double`.
    public var numberValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// The object, if this is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON object whose member names are unique, in document order.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection {
    /// One name/value pair.
    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue

        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in document order.
    public private(set) var members: [Member]

    /// An empty object.
    public init() {
        self.members = []
    }

    /// An object from pairs; a later pair with the same name replaces the earlier one.
    public init(_ pairs: KeyValuePairs<String, JSONValue>) {
        self.members = []
        for (key, value) in pairs {
            self[key] = value
        }
    }

    /// Members whose names the caller has already checked to be unique (the parser).
    init(uncheckedMembers members: [Member]) {
        self.members = members
    }

    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> Member { members[position] }

    /// The member names in document order.
    public var keys: [String] { members.map(\.key) }

    /// The value of the member called `key`; setting `nil` removes it, setting a new name appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key {
                return member.value
            }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue {
                    members[index].value = newValue
                } else {
                    members.remove(at: index)
                }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements {
            object[key] = value
        }
        self = .object(object)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object from a literal; a later pair with the same name replaces the earlier one.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        for (key, value) in elements {
            self[key] = value
        }
    }
}
