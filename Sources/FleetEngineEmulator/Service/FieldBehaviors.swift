public import FleetAuthServerSupport
import FleetEngineAPI
import Foundation
public import SwiftProtobuf

/// Google's `google.api.field_behavior` annotations, read once from the descriptors the protos compile to
/// (`ProtoFileDescriptors`), and the one check that enforces `REQUIRED` for every RPC of both APIs, whichever
/// transport the request came by (<doc:GoogleFieldRules>).
///
/// A request message's `REQUIRED` fields must be set, and so must the `REQUIRED` fields of every Fleet Engine message
/// set inside it, to any depth: a trip's pickup `TerminalLocation` needs its `point`. Set means what proto3 means by
/// it: a scalar or enum other than its default, a message present, a repeated field not empty. Two exceptions, both
/// from Google's field comments:
/// - The resource of an update (the message beside an `update_mask`) is partial: it carries only the fields the mask
///   names, so its own `REQUIRED` fields are not checked; the messages set inside it are.
/// - A request inside a batch (BatchCreateTasks' `requests`) may leave `parent` empty: the batch's parent applies.
///
/// The answer is `INVALID_ARGUMENT` naming the first missing field by its REST (lowerCamel) path, such as
/// `trip.pickupPoint.point is required.`.
public enum FieldBehaviors {
    /// A field of a Fleet Engine message, as the descriptors declare it.
    struct Field: Sendable {
        let name: String
        let jsonName: String
        let behaviors: Set<Google_Api_FieldBehavior>
    }

    /// A message's fields by number, and its `REQUIRED` ones in declaration order.
    struct Message: Sendable {
        let fields: [Int: Field]
        let required: [(number: Int, field: Field)]
        /// An update request: `update_mask` names what its resource carries.
        var isUpdate: Bool { fields.values.contains { $0.name == "update_mask" } }
    }

    /// Every message of `maps.fleetengine.v1` and `maps.fleetengine.delivery.v1`, by full name.
    static let messages: [String: Message] = {
        guard
            let data = Data(
                base64Encoded: ProtoFileDescriptors.base64FileDescriptorSet,
                options: .ignoreUnknownCharacters
            ),
            let set = try? Google_Protobuf_FileDescriptorSet(
                serializedBytes: data,
                extensions: Google_Api_FieldBehavior_Extensions
            )
        else { preconditionFailure("ProtoFileDescriptors is not a FileDescriptorSet: regenerate it") }
        var messages: [String: Message] = [:]
        func add(_ message: Google_Protobuf_DescriptorProto, in scope: String) {
            let name = scope + "." + message.name
            var fields: [Int: Field] = [:]
            var required: [(Int, Field)] = []
            for field in message.field {
                let entry = Field(
                    name: field.name,
                    jsonName: field.jsonName,
                    behaviors: Set(field.options.Google_Api_fieldBehavior)
                )
                fields[Int(field.number)] = entry
                if entry.behaviors.contains(.required) { required.append((Int(field.number), entry)) }
            }
            messages[name] = Message(fields: fields, required: required)
            for nested in message.nestedType { add(nested, in: name) }
        }
        for file in set.file where file.package.hasPrefix("maps.fleetengine.") {
            for message in file.messageType { add(message, in: file.package) }
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

    /// Throws `INVALID_ARGUMENT` naming the first `REQUIRED` field that `request` (or a message set inside it) leaves
    /// unset.
    public static func checkRequired(_ request: some SwiftProtobuf.Message) throws(GoogleAPIError) {
        do {
            try check(request, path: "", partial: false, batched: false)
        } catch let error as GoogleAPIError {
            throw error
        } catch {
            throw .invalidArgument("The request could not be read: \(error).")
        }
    }

    private static func check(_ message: some SwiftProtobuf.Message, path: String, partial: Bool, batched: Bool)
        throws
    {
        guard let rules = messages[type(of: message).protoMessageName] else { return }
        var presence = Presence(rules: rules)
        try message.traverse(visitor: &presence)
        if !partial {
            for (number, field) in rules.required where !presence.set.contains(number) {
                if batched, field.name == "parent" { continue }
                throw GoogleAPIError.invalidArgument("\(path)\(field.jsonName) is required.")
            }
        }
        for nested in presence.nested {
            guard let field = rules.fields[nested.number] else { continue }
            let index = nested.index.map { "[\($0)]" } ?? ""
            try check(
                nested.message,
                path: "\(path)\(field.jsonName)\(index).",
                partial: rules.isUpdate && field.behaviors.contains(.required) && field.name != "update_mask",
                batched: nested.index != nil && type(of: nested.message).protoMessageName.hasSuffix("Request")
            )
        }
    }

    /// Which fields of one message are set, and the messages set in it (each element of a repeated field with its
    /// index); map values are not Fleet Engine messages with rules, and are skipped.
    private struct Presence: SwiftProtobuf.Visitor {
        let rules: Message
        var set: Set<Int> = []
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
        }
        mutating func visitSingularMessageField<M: SwiftProtobuf.Message>(value: M, fieldNumber: Int) throws {
            set.insert(fieldNumber)
            nested.append((fieldNumber, nil, value))
        }
        mutating func visitRepeatedMessageField<M: SwiftProtobuf.Message>(value: [M], fieldNumber: Int) throws {
            set.insert(fieldNumber)
            for (index, element) in value.enumerated() { nested.append((fieldNumber, index, element)) }
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
