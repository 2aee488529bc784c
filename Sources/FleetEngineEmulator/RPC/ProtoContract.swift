import FleetEngineAPI
import Foundation
import SwiftProtobuf

/// The descriptors the project's protos compile to (`ProtoFileDescriptors`), read once with Google's annotations
/// (`google.api.http` on methods, `google.api.field_behavior` on fields): the one source the REST transcoding
/// (``HTTPRules``) and the field rules (``FieldBehaviors``) are derived from.
enum ProtoContract {
    /// Every file of the set.
    static let files: [Google_Protobuf_FileDescriptorProto] = {
        var extensions = SimpleExtensionMap()
        extensions.formUnion(Google_Api_FieldBehavior_Extensions)
        extensions.formUnion(Google_Api_Annotations_Extensions)
        guard
            let data = Data(
                base64Encoded: ProtoFileDescriptors.base64FileDescriptorSet,
                options: .ignoreUnknownCharacters
            ),
            let set = try? Google_Protobuf_FileDescriptorSet(serializedBytes: data, extensions: extensions)
        else { preconditionFailure("ProtoFileDescriptors is not a FileDescriptorSet: regenerate it") }
        return set.file
    }()

    /// Every message of every file, by full name without the leading dot (`maps.fleetengine.v1.Vehicle`).
    static let messages: [String: Google_Protobuf_DescriptorProto] = {
        var messages: [String: Google_Protobuf_DescriptorProto] = [:]
        func add(_ message: Google_Protobuf_DescriptorProto, in scope: String) {
            let name = scope.isEmpty ? message.name : scope + "." + message.name
            messages[name] = message
            for nested in message.nestedType { add(nested, in: name) }
        }
        for file in files {
            for message in file.messageType { add(message, in: file.package) }
        }
        return messages
    }()

    /// Every enum of every file, nested ones too, by full name without the leading dot.
    static let enums: [String: Google_Protobuf_EnumDescriptorProto] = {
        var enums: [String: Google_Protobuf_EnumDescriptorProto] = [:]
        for file in files {
            for declared in file.enumType { enums[file.package + "." + declared.name] = declared }
        }
        for (name, message) in messages {
            for declared in message.enumType { enums[name + "." + declared.name] = declared }
        }
        return enums
    }()

    /// The methods of Fleet Engine's services (both APIs), by `package.Service/Method`.
    static let methods: [String: Google_Protobuf_MethodDescriptorProto] = {
        var methods: [String: Google_Protobuf_MethodDescriptorProto] = [:]
        for file in files where file.package.hasPrefix("maps.fleetengine.") {
            for service in file.service {
                for method in service.method { methods[file.package + "." + service.name + "/" + method.name] = method }
            }
        }
        return methods
    }()

    /// A field's message or enum type name without the leading dot.
    static func typeName(_ field: Google_Protobuf_FieldDescriptorProto) -> String {
        String(field.typeName.drop { $0 == "." })
    }
}
