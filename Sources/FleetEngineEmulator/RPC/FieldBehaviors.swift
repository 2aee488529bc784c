public import FleetAuthServerCore
import FleetEngineAPI
import Foundation
public import SwiftProtobuf

/// Google's `google.api.field_behavior` annotations, read once from the descriptors the protos compile to
/// (`ProtoFileDescriptors`), and the one check that enforces `REQUIRED` and `OUTPUT_ONLY` for every RPC of both
/// APIs, whichever transport the request came by (<doc:GoogleFieldRules>); the update masks' lists of fields that
/// cannot change come from the same table (`IMMUTABLE`, `OUTPUT_ONLY`).
///
/// A request message's `REQUIRED` fields must be set, and so must the `REQUIRED` fields of every Fleet Engine message
/// set inside it, to any depth: a trip's pickup `TerminalLocation` needs its `point`. Set means what proto3 means by
/// it: a scalar or enum other than its default, a message present, a repeated field not empty. Two exceptions, both
/// from Google's field comments:
/// - The resource of an update (the message beside an `update_mask`) is partial: it carries only the fields the mask
///   names, so its own `REQUIRED` fields are not checked; the messages set inside it are.
/// - A request inside a batch (BatchCreateTasks' `requests`) may leave `parent` empty: the batch's parent applies.
///
/// The same walk checks what the descriptors say of every value a request sets, in any Fleet Engine message: an enum
/// field holds a value its enum declares, and never `FLEET_ENGINE_LOCATION` (a location Fleet Engine computed, which
/// Google rejects in a request); a `google.type.LatLng` has a latitude in [-90, 90] and a longitude in [-180, 180].
///
/// The answer is `INVALID_ARGUMENT` naming the first field at fault by its REST (lowerCamel) path, such as
/// `trip.pickupPoint.point is required.` or `vehicle.lastLocation.location.latitude must be in [-90, 90].`.
public enum FieldBehaviors {
    /// A field of a Fleet Engine message, as the descriptors declare it.
    struct Field: Sendable {
        let name: String
        let jsonName: String
        let behaviors: Set<Google_Api_FieldBehavior>
        /// The full name of the field's message type, for a message field.
        let messageType: String?
        /// For an enum field: the numbers its enum declares, and the one a request may not carry, if any.
        let enumValues: Set<Int>?
        let refusedValue: Int?
    }

    /// The enum value no request may carry, in either API's location sensor enum: Google's comment on
    /// `FLEET_ENGINE_LOCATION` says "This value will be rejected if it is received in a request."
    static let refusedEnumValueName = "FLEET_ENGINE_LOCATION"

    /// A set of field numbers. Every field Fleet Engine's messages declare is numbered below 64 (35 at most today),
    /// so the set is one word; a larger number (an unknown field) is never a member.
    struct FieldNumbers: Sendable {
        var bits: UInt64 = 0
        mutating func insert(_ number: Int) { if number > 0, number < 64 { bits |= 1 << UInt64(number) } }
        func contains(_ number: Int) -> Bool { number > 0 && number < 64 && bits & (1 << UInt64(number)) != 0 }
    }

    /// A message's fields by number, its `REQUIRED` ones in declaration order, and which have other rules.
    struct Message: Sendable {
        let fields: [Int: Field]
        let required: [(number: Int, field: Field)]
        let outputOnly: FieldNumbers
        /// Message fields whose type is a Fleet Engine message: the only ones worth visiting.
        var withRules = FieldNumbers()
        /// Fields of type `google.type.LatLng`, whose ranges are checked.
        let latLngs: FieldNumbers
        /// An update request: `update_mask` names what its resource carries.
        let isUpdate: Bool
    }

    /// The scalar types whose default is a number (or false) rather than empty.
    private static let numericTypes: Set<Google_Protobuf_FieldDescriptorProto.TypeEnum> = [
        .int32, .int64, .uint32, .uint64, .sint32, .sint64, .fixed32, .fixed64, .sfixed32, .sfixed64, .double, .float,
        .bool,
    ]

    /// Every message of `maps.fleetengine.v1` and `maps.fleetengine.delivery.v1`, by full name.
    static let messages: [String: Message] = {
        var messages: [String: Message] = [:]
        func add(_ message: Google_Protobuf_DescriptorProto, in scope: String) {
            let name = scope + "." + message.name
            var fields: [Int: Field] = [:]
            var required: [(Int, Field)] = []
            var outputOnly = FieldNumbers()
            var latLngs = FieldNumbers()
            for field in message.field {
                precondition(field.number < 64, "\(name).\(field.name) is numbered 64 or above: widen FieldNumbers")
                let type = ProtoContract.typeName(field)
                let values = field.type == .enum ? ProtoContract.enums[type]?.value : nil
                let entry = Field(
                    name: field.name,
                    jsonName: field.jsonName,
                    behaviors: Set(field.options.Google_Api_fieldBehavior),
                    messageType: field.type == .message ? type : nil,
                    enumValues: values.map { Set($0.map { Int($0.number) }) },
                    refusedValue: values?.first { $0.name == refusedEnumValueName }.map { Int($0.number) }
                )
                fields[Int(field.number)] = entry
                // proto3 cannot tell an unset number from zero. In a request, a required number of zero is missing (a
                // search for `minimumCapacity` 0); inside a resource it is a value (a traffic stretch at offset 0).
                let zeroIsAValue = !message.name.hasSuffix("Request") && Self.numericTypes.contains(field.type)
                if entry.behaviors.contains(.required), !zeroIsAValue { required.append((Int(field.number), entry)) }
                if entry.behaviors.contains(.outputOnly) { outputOnly.insert(Int(field.number)) }
                if type == Google_Type_LatLng.protoMessageName { latLngs.insert(Int(field.number)) }
            }
            messages[name] = Message(
                fields: fields,
                required: required,
                outputOnly: outputOnly,
                latLngs: latLngs,
                isUpdate: fields.values.contains { $0.name == "update_mask" }
            )
            for nested in message.nestedType { add(nested, in: name) }
        }
        for file in ProtoContract.files where file.package.hasPrefix("maps.fleetengine.") {
            for message in file.messageType { add(message, in: file.package) }
        }
        for (name, message) in messages {
            for (number, field) in message.fields where field.messageType.map({ messages[$0] != nil }) == true {
                messages[name]?.withRules.insert(number)
            }
        }
        return messages
    }()

    /// The fields of a resource that an update mask may not name, by proto name, each with the reason: those the
    /// annotations mark `IMMUTABLE` ("immutable") or `OUTPUT_ONLY` ("output only"), and `name`, which the request's
    /// path gives.
    public static func fixedFields(of resource: any SwiftProtobuf.Message.Type) -> [String: String] {
        var fixed = ["name": "the resource's name"]
        for field in messages[resource.protoMessageName]?.fields.values ?? [:].values {
            if field.behaviors.contains(.immutable) {
                fixed[field.name] = "immutable"
            } else if field.behaviors.contains(.outputOnly) {
                fixed[field.name] = "output only"
            }
        }
        return fixed
    }

    /// The names (proto spelling) of the fields `message` declares, and of those among them it marks `INPUT_ONLY`.
    static func fieldNames(of message: any SwiftProtobuf.Message.Type) -> (all: [String], inputOnly: [String]) {
        let fields = messages[message.protoMessageName]?.fields.values.map { $0 } ?? []
        return (fields.map(\.name), fields.filter { $0.behaviors.contains(.inputOnly) }.map(\.name))
    }

    /// `request` as the service acts on it: throws `INVALID_ARGUMENT` naming the first `REQUIRED` field that the
    /// request (or a message set inside it) leaves unset, and leaves out every `OUTPUT_ONLY` field it sets, at any
    /// depth: what Fleet Engine computes is never taken from a request (a location's `serverTime`, a trip's
    /// `remainingWaypoints`, a journey segment's `drivingDistanceMeters`, a vehicle's `currentTrips`, …).
    public static func checked<Request: SwiftProtobuf.Message>(_ request: Request) throws(GoogleAPIError) -> Request {
        do {
            guard try check(request, partial: false, batched: false, refusing: false) else { return request }
            let bytes: [UInt8] = try request.serializedBytes()
            return try Request(serializedBytes: try withoutOutputOnly(bytes[...], of: Request.protoMessageName))
        } catch let refusal as Refusal {
            throw .invalidArgument(refusal.path.joined(separator: ".") + " " + refusal.problem)
        } catch {
            throw .invalidArgument("The request could not be read: \(error).")
        }
    }

    /// The requests whose comment says every field not listed "must not be set; otherwise, an error is returned":
    /// an output-only field set in them, at any depth, is refused rather than left out.
    static let refusingOutputOnly: Set<String> = [
        FleetEngineDelivery.CreateTaskRequest.protoMessageName,
        FleetEngineDelivery.CreateDeliveryVehicleRequest.protoMessageName,
    ]

    /// A field the check refuses: its path (built only on the way out, so a valid request costs no strings) and
    /// what is wrong with it.
    private struct Refusal: Error {
        var path: [String]
        let problem: String
    }

    /// Checks `message`'s required fields (and those of the messages in it); true if it, or a message in it, sets
    /// an output-only field. With `refusing` (inside a request of ``refusingOutputOnly``), such a field is refused.
    private static func check(
        _ message: some SwiftProtobuf.Message,
        partial: Bool,
        batched: Bool,
        refusing: Bool
    ) throws -> Bool {
        let name = type(of: message).protoMessageName
        guard let rules = messages[name] else { return false }
        let refusing = refusing || refusingOutputOnly.contains(name)
        var presence = Presence(rules: rules)
        try message.traverse(visitor: &presence)
        let outputOnly = presence.set.bits & rules.outputOnly.bits
        if refusing, outputOnly != 0, let field = rules.fields[outputOnly.trailingZeroBitCount] {
            throw Refusal(path: [field.jsonName], problem: "is output only: it must not be set.")
        }
        if !partial {
            for (number, field) in rules.required where !presence.set.contains(number) {
                if batched, field.name == "parent" { continue }
                throw Refusal(path: [field.jsonName], problem: "is required.")
            }
        }
        var found = outputOnly != 0
        for nested in presence.nested {
            guard let field = rules.fields[nested.number] else { continue }
            do {
                found =
                    try check(
                        nested.message,
                        partial: rules.isUpdate && field.behaviors.contains(.required) && field.name != "update_mask",
                        batched: nested.index != nil
                            && type(of: nested.message).protoMessageName.hasSuffix("Request"),
                        refusing: refusing
                    ) || found
            } catch var refusal as Refusal {
                refusal.path.insert(field.jsonName + (nested.index.map { "[\($0)]" } ?? ""), at: 0)
                throw refusal
            }
        }
        return found
    }

    /// The wire-format `bytes` of a message of type `name` without its output-only fields, at any depth; every
    /// other field, unknown ones included, is kept byte for byte.
    private static func withoutOutputOnly(_ bytes: ArraySlice<UInt8>, of name: String) throws -> [UInt8] {
        guard let rules = messages[name] else { return Array(bytes) }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let start = index
            let key = try varint(bytes, &index)
            let keyEnd = index
            let number = Int(truncatingIfNeeded: key >> 3)
            var payload: Range<Int>?
            switch key & 7 {
            case 0: _ = try varint(bytes, &index)
            case 1: index += 8
            case 5: index += 4
            case 2:
                let length = Int(truncatingIfNeeded: try varint(bytes, &index))
                guard length >= 0, length <= bytes.endIndex - index else { throw WireFormatError() }
                payload = index..<(index + length)
                index += length
            default: throw WireFormatError()
            }
            guard index <= bytes.endIndex else { throw WireFormatError() }
            if rules.outputOnly.contains(number) { continue }
            if let payload, rules.withRules.contains(number), let type = rules.fields[number]?.messageType {
                let inner = try withoutOutputOnly(bytes[payload], of: type)
                result += bytes[start..<keyEnd]
                result += ProtoWire.varint(UInt64(inner.count))
                result += inner
            } else {
                result += bytes[start..<index]
            }
        }
        return result
    }

    private struct WireFormatError: Error, CustomStringConvertible {
        var description: String { "not a valid protobuf message" }
    }

    private static func varint(_ bytes: ArraySlice<UInt8>, _ index: inout Int) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.endIndex, shift < 64 {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        throw WireFormatError()
    }

    /// Which fields of one message are set, and the Fleet Engine messages set in it (each element of a repeated
    /// field with its index); other messages (coordinates, times, wrappers) and map values have no rules, and are
    /// not visited.
    private struct Presence: SwiftProtobuf.Visitor {
        let rules: Message
        var set = FieldNumbers()
        var nested: [(number: Int, index: Int?, message: any SwiftProtobuf.Message)] = []

        init(rules: Message) { self.rules = rules }

        mutating func visitSingularDoubleField(value: Double, fieldNumber: Int) throws { set.insert(fieldNumber) }
        mutating func visitSingularInt64Field(value: Int64, fieldNumber: Int) throws { set.insert(fieldNumber) }
        mutating func visitSingularUInt64Field(value: UInt64, fieldNumber: Int) throws { set.insert(fieldNumber) }
        mutating func visitSingularBoolField(value: Bool, fieldNumber: Int) throws { set.insert(fieldNumber) }
        mutating func visitSingularStringField(value: String, fieldNumber: Int) throws { set.insert(fieldNumber) }
        mutating func visitSingularBytesField(value: Data, fieldNumber: Int) throws { set.insert(fieldNumber) }
        mutating func visitSingularEnumField<E: SwiftProtobuf.Enum>(value: E, fieldNumber: Int) throws {
            set.insert(fieldNumber)
            try check(value.rawValue, fieldNumber, index: nil)
        }
        mutating func visitRepeatedEnumField<E: SwiftProtobuf.Enum>(value: [E], fieldNumber: Int) throws {
            set.insert(fieldNumber)
            for (index, element) in value.enumerated() { try check(element.rawValue, fieldNumber, index: index) }
        }
        mutating func visitSingularMessageField<M: SwiftProtobuf.Message>(value: M, fieldNumber: Int) throws {
            set.insert(fieldNumber)
            if rules.withRules.contains(fieldNumber) { nested.append((fieldNumber, nil, value)) }
            if rules.latLngs.contains(fieldNumber) { try check(value, fieldNumber, index: nil) }
        }
        mutating func visitRepeatedMessageField<M: SwiftProtobuf.Message>(value: [M], fieldNumber: Int) throws {
            set.insert(fieldNumber)
            if rules.latLngs.contains(fieldNumber) {
                for (index, element) in value.enumerated() { try check(element, fieldNumber, index: index) }
            }
            guard rules.withRules.contains(fieldNumber) else { return }
            for (index, element) in value.enumerated() { nested.append((fieldNumber, index, element)) }
        }

        /// An enum value of a field that a request may set: one its enum declares, and not the one no request may
        /// carry.
        private func check(_ value: Int, _ fieldNumber: Int, index: Int?) throws {
            guard !rules.outputOnly.contains(fieldNumber), let field = rules.fields[fieldNumber],
                let known = field.enumValues
            else { return }
            let path = [field.jsonName + (index.map { "[\($0)]" } ?? "")]
            guard known.contains(value) else { throw Refusal(path: path, problem: "has an unknown value (\(value)).") }
            if value == field.refusedValue {
                throw Refusal(path: path, problem: "cannot be \(refusedEnumValueName): only Fleet Engine sets it.")
            }
        }

        /// A coordinate pair that a request may set (``MessageChecks/coordinateFault(_:)``).
        private func check(_ point: some SwiftProtobuf.Message, _ fieldNumber: Int, index: Int?) throws {
            guard !rules.outputOnly.contains(fieldNumber), let point = point as? Google_Type_LatLng,
                let fault = MessageChecks.coordinateFault(point), let field = rules.fields[fieldNumber]
            else { return }
            let path = field.jsonName + (index.map { "[\($0)]" } ?? "")
            throw Refusal(path: [path, fault.part], problem: fault.problem)
        }
        mutating func visitMapField<KeyType, ValueType: MapValueType>(
            fieldType: _ProtobufMap<KeyType, ValueType>.Type,
            value: _ProtobufMap<KeyType, ValueType>.BaseType,
            fieldNumber: Int
        ) throws { set.insert(fieldNumber) }
        mutating func visitMapField<KeyType, ValueType>(
            fieldType: _ProtobufEnumMap<KeyType, ValueType>.Type,
            value: _ProtobufEnumMap<KeyType, ValueType>.BaseType,
            fieldNumber: Int
        ) throws { set.insert(fieldNumber) }
        mutating func visitMapField<KeyType, ValueType>(
            fieldType: _ProtobufMessageMap<KeyType, ValueType>.Type,
            value: _ProtobufMessageMap<KeyType, ValueType>.BaseType,
            fieldNumber: Int
        ) throws { set.insert(fieldNumber) }
        mutating func visitUnknown(bytes: Data) throws {}
    }
}
