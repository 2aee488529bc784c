#!/usr/bin/env python3
"""Writes the Swift that the emulator's services are built on, from the descriptors alone, into a folder:

- UnaryMethods.swift: for each gRPC service, a namespace `<Service>RPCs` that uses no gRPC type (so no platform
  minimum beyond SwiftProtobuf's): a transport-neutral `Implementation` protocol (each unary RPC a function of its
  request message and the caller), each unary RPC as a `UnaryMethod` (its messages and its `RPCMethod` name), and a
  `visitUnaryMethods(of:_:)` that hands every RPC of an implementation to a `UnaryMethodVisitor`, typed.
- UpdateMasks.swift: for each resource an update request carries beside its `update_mask` (Vehicle, Trip, Task,
  DeliveryVehicle), `replaceField(_:from:)`, which writes one top-level field as a mask naming it does.

Run by Scripts/generate-protos.sh: `generate-contract.py SET FOLDER`, where SET is a serialized
google.protobuf.FileDescriptorSet of Protos/ (without the files they import). It reads the protobuf wire format
itself, so it needs nothing beyond the Python standard library.
"""
import sys


def fields(data):
    """Yields (field number, wire type, value) for each field of one serialized message."""
    index = 0

    def varint():
        nonlocal index
        shift = result = 0
        while True:
            byte = data[index]
            index += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result
            shift += 7

    while index < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            yield number, wire, varint()
        elif wire == 2:
            length = varint()
            yield number, wire, data[index:index + length]
            index += length
        elif wire == 1:
            index += 8
        elif wire == 5:
            index += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")


def swift_namespace(package, service):
    """SwiftProtobuf's name for a package's type, which grpc-swift's generator uses for the service's namespace:
    `maps.fleetengine.v1` + `VehicleService` is `Maps_Fleetengine_V1_VehicleService`."""
    parts = []
    for component in package.split("."):
        words = [word for word in component.split("_") if word]
        parts.append("".join(word[0].upper() + word[1:] for word in words))
    return "_".join(parts + [service])


def swift_type(package, type_name):
    """SwiftProtobuf's name for a message type of the service's package (`.maps.fleetengine.v1.Vehicle` is
    `Maps_Fleetengine_V1_Vehicle`), or None for `google.protobuf.Empty`, which an implementation answers with nothing."""
    if type_name == ".google.protobuf.Empty":
        return None
    prefix = "." + package + "."
    if not type_name.startswith(prefix):
        raise ValueError(f"{type_name} is not a message of {package}")
    return swift_namespace(package, type_name[len(prefix):].replace(".", "_"))


def files(descriptor_set):
    """(package, [(field number, value)]) for each FileDescriptorProto of the set, in its order."""
    for number, _, file_bytes in fields(descriptor_set):
        if number == 1:
            file_fields = [(field, value) for field, _, value in fields(file_bytes)]
            package = next((value.decode() for field, value in file_fields if field == 2), "")
            yield package, file_fields


def services(descriptor_set):
    """(package, service, [(method, input type, output type)]) for every service with unary methods, in the files'
    order."""
    for package, file_fields in files(descriptor_set):
        found = []
        for field, value in file_fields:
            if field == 6:
                name, methods = "", []
                for service_field, _, service_value in fields(value):
                    if service_field == 1:
                        name = service_value.decode()
                    elif service_field == 2:
                        method, types, streaming = "", {}, False
                        for method_field, _, method_value in fields(service_value):
                            if method_field == 1:
                                method = method_value.decode()
                            elif method_field in (2, 3):
                                types[method_field] = method_value.decode()
                            elif method_field in (5, 6) and method_value:
                                streaming = True
                        if not streaming:
                            methods.append((method, types[2], types[3]))
                found.append((name, methods))
        for name, methods in found:
            if methods:
                yield package, name, methods


def camel_case(name):
    """SwiftProtobuf's property name for a field: `last_location` is `lastLocation`, `vehicle_id` is `vehicleID`
    (its abbreviations: id, url, http, https are upper-cased after the first word)."""
    words, word, last = [], "", ""
    for char in name:
        kind = "digit" if char.isdigit() else "lower" if char.islower() else "upper" if char.isupper() else "_"
        if kind == "_" or (kind == "digit" and last != "digit") or (kind != "digit" and last == "digit") \
                or (kind == "upper" and last != "upper"):
            if word:
                words.append(word)
            word = ""
        if kind != "_":
            word += char.lower()
        last = kind
    if word:
        words.append(word)
    return words[0] + "".join(w.upper() if w in ("id", "url", "http", "https") else w[0].upper() + w[1:]
                              for w in words[1:])


def messages(descriptor_set):
    """{full name (`.pkg.Message`): (package, [field])} for every message of the set, nested ones included; each
    field a dict of its name, label, type, type name, oneof, proto3 `optional`, and whether it is `REQUIRED`
    (`google.api.field_behavior`, extension 1052 of FieldOptions; REQUIRED is 2)."""
    found = {}

    def add(package, scope, data):
        name, fields_of = "", []
        nested = []
        for number, _, value in fields(data):
            if number == 1:
                name = value.decode()
            elif number == 2:
                field = {"label": 1, "type": 0, "type_name": "", "oneof": None, "optional": False, "required": False}
                for field_number, _, field_value in fields(value):
                    if field_number == 1:
                        field["name"] = field_value.decode()
                    elif field_number == 4:
                        field["label"] = field_value
                    elif field_number == 5:
                        field["type"] = field_value
                    elif field_number == 6:
                        field["type_name"] = field_value.decode()
                    elif field_number == 9:
                        field["oneof"] = field_value
                    elif field_number == 17:
                        field["optional"] = bool(field_value)
                    elif field_number == 8:
                        field["required"] = any(
                            option == 1052 and (behavior == 2 if wire == 0 else 2 in behavior)
                            for option, wire, behavior in fields(field_value)
                        )
                fields_of.append(field)
            elif number == 3:
                nested.append(value)
        full = scope + "." + name
        found[full] = (package, fields_of)
        for inner in nested:
            add(package, full, inner)

    for package, file_fields in files(descriptor_set):
        for field, value in file_fields:
            if field == 4:
                add(package, "." + package, value)
    return found


HEADER = [
    "// DO NOT EDIT. Written by Scripts/generate-protos.sh (Scripts/generate-contract.py) from Protos/.",
    "// swift-format-ignore-file",
    "",
    "import SwiftProtobuf",
]


def update_masks(descriptor_set):
    """The Swift of UpdateMasks.swift: `replaceField(_:from:)` for the resource beside each `update_mask`."""
    all_messages = messages(descriptor_set)
    resources = []
    for name, (package, request_fields) in all_messages.items():
        if not any(field["name"] == "update_mask" for field in request_fields):
            continue
        for field in request_fields:
            # The resource is the request's REQUIRED message field beside the mask (not its optional `header`).
            if field["type"] == 11 and field["required"] and field["type_name"] in all_messages \
                    and field["type_name"] not in resources:
                resources.append(field["type_name"])
    lines = list(HEADER)
    for resource in resources:
        package, resource_fields = all_messages[resource]
        swift = swift_namespace(package, resource[len(package) + 2:].replace(".", "_"))
        lines += [
            "",
            f"extension {swift} {{",
            "    /// Sets the top-level field named `field` (proto spelling, such as `last_location`) to `source`'s, as an",
            "    /// update mask naming it does: a message or optional field that `source` leaves unset is cleared. False,",
            "    /// and nothing written, for a name the message does not declare.",
            "    @discardableResult",
            "    public mutating func replaceField(_ field: String, from source: Self) -> Bool {",
            "        switch field {",
        ]
        for field in resource_fields:
            if field["oneof"] is not None and not field["optional"]:
                raise ValueError(f"{resource}.{field['name']} is in a oneof: write its replacement by hand")
            prop = camel_case(field["name"])
            upper = prop[0].upper() + prop[1:]
            if field["label"] != 3 and (field["type"] == 11 or field["optional"]):
                body = f"if source.has{upper} {{ {prop} = source.{prop} }} else {{ clear{upper}() }}"
            else:
                body = f"{prop} = source.{prop}"
            lines.append(f'        case "{field["name"]}": {body}')
        lines += [
            "        default: return false",
            "        }",
            "        return true",
            "    }",
            "}",
        ]
    return lines


def main():
    with open(sys.argv[1], "rb") as file:
        descriptor_set = file.read()
    lines = list(HEADER)
    for package, service, methods in services(descriptor_set):
        namespace = swift_namespace(package, service) + "RPCs"
        lines += [
            "",
            f'/// The unary RPCs of "{package}.{service}", free of any transport: the service\'s `Implementation`',
            "/// protocol, each RPC's messages and name, and the visit that hands an implementation's RPCs to a transport.",
            "/// It uses no gRPC type, so it is available wherever SwiftProtobuf is.",
            f"public enum {namespace} {{",
            f'    /// Answers every RPC of "{package}.{service}", whichever transport brings it: each RPC is a',
            "    /// function of its request message and the caller. A type conforming to it answers every unary RPC the",
            "    /// proto declares, or does not build.",
            "    public protocol Implementation: Sendable {",
            "        /// Who makes the call, as the transports' shared pipeline authenticated it.",
            "        associatedtype Caller",
        ]
        for method, input, output in methods:
            function = method[0].lower() + method[1:]
            answer = swift_type(package, output)
            lines += [
                "",
                f"        /// `{service}/{method}`.",
                f"        func {function}(_ request: {swift_type(package, input)}, caller: Caller) async throws"
                + (f" -> {answer}" if answer else ""),
            ]
        lines += ["    }"]
        for method, input, output in methods:
            lines += [
                "",
                f"    /// `{service}/{method}`: its messages and its name.",
                f"    public enum {method}: UnaryMethod {{",
                f"        public typealias Input = {swift_type(package, input)}",
                f"        public typealias Output = {swift_type(package, output) or 'Google_Protobuf_Empty'}",
                f'        public static let rpc = RPCMethod(service: "{package}.{service}", method: "{method}")',
                "    }",
            ]
        lines += [
            "",
            f'    /// Hands each unary RPC of "{package}.{service}", answered by `implementation`, to `visitor`, with',
            "    /// its types, in the proto's order: an RPC added to the proto is visited as soon as it is implemented.",
            "    /// Inlinable, so that a caller's concrete implementation and visitor specialize every RPC's path.",
            "    @inlinable",
            "    public static func visitUnaryMethods<Service: Implementation, Visitor: UnaryMethodVisitor>(",
            "        of implementation: Service,",
            "        _ visitor: inout Visitor",
            "    ) where Visitor.Caller == Service.Caller {",
        ]
        for method, _, output in methods:
            function = method[0].lower() + method[1:]
            call = f"try await implementation.{function}($0, caller: $1)"
            body = call if swift_type(package, output) else call + "; return Google_Protobuf_Empty()"
            lines += [f"        visitor.visit({method}.self) {{ {body} }}"]
        lines += ["    }", "}"]
    with open(sys.argv[2] + "/UnaryMethods.swift", "w") as file:
        file.write("\n".join(lines) + "\n")
    with open(sys.argv[2] + "/UpdateMasks.swift", "w") as file:
        file.write("\n".join(update_masks(descriptor_set)) + "\n")


if __name__ == "__main__":
    main()
