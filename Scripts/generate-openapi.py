#!/usr/bin/env python3
"""Writes Sources/FleetEngineEmulator/Resources/openapi.yaml: the emulator's REST API as OpenAPI 3.1.

The component schemas are generated from the .proto files in Protos/ (compiled by protoc into a descriptor set),
by the proto3 JSON mapping: lowerCamelCase names, enums by name, 64-bit integers as strings or numbers,
Timestamps and Durations as strings, wrappers as their values. The paths, their parameters and bodies
come from each RPC's google.api.http rule and its request message, as the emulator's router derives them. Run it after changing a .proto or a route (needs protoc and PyYAML).
"""
import os
import subprocess
import sys
import tempfile

import yaml
from google.api import annotations_pb2, field_behavior_pb2
from google.protobuf import descriptor_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Sources/FleetEngineEmulator/Resources/openapi.yaml")
INCLUDE = os.environ.get("PROTOBUF_INCLUDE", "/usr/include")

F = descriptor_pb2.FieldDescriptorProto
INT32 = {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}
UINT32 = {"type": "integer", "minimum": 0, "maximum": 4294967295}
INT64 = {"type": ["string", "integer"], "pattern": "^-?[0-9]+$"}
SCALARS = {
    F.TYPE_DOUBLE: {"type": "number"}, F.TYPE_FLOAT: {"type": "number"}, F.TYPE_BOOL: {"type": "boolean"},
    F.TYPE_STRING: {"type": "string"}, F.TYPE_BYTES: {"type": "string", "contentEncoding": "base64"},
    F.TYPE_INT32: INT32, F.TYPE_SINT32: INT32, F.TYPE_SFIXED32: INT32, F.TYPE_UINT32: UINT32, F.TYPE_FIXED32: UINT32,
    F.TYPE_INT64: INT64, F.TYPE_SINT64: INT64, F.TYPE_SFIXED64: INT64, F.TYPE_UINT64: INT64, F.TYPE_FIXED64: INT64,
}
WELL_KNOWN = {
    ".google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    ".google.protobuf.Duration": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]{1,9})?s$"},
    ".google.protobuf.FieldMask": {"type": "string"},
    ".google.protobuf.Int32Value": INT32, ".google.protobuf.UInt32Value": UINT32,
    ".google.protobuf.Int64Value": INT64, ".google.protobuf.UInt64Value": INT64,
    ".google.protobuf.DoubleValue": {"type": "number"}, ".google.protobuf.FloatValue": {"type": "number"},
    ".google.protobuf.BoolValue": {"type": "boolean"}, ".google.protobuf.StringValue": {"type": "string"},
    ".google.protobuf.Empty": {"type": "object", "additionalProperties": False},
}
# Ranges the emulator checks beyond the types.
LIMITS = {
    ("google.type.LatLng", "latitude"): {"minimum": -90, "maximum": 90},
    ("google.type.LatLng", "longitude"): {"minimum": -180, "maximum": 180},
}
ID = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[^/:?,#\\s]+$"}
PROVIDER = {"type": "string", "pattern": "^[a-z][a-z0-9-]{0,62}$"}


def descriptors():
    protos = []
    for directory, _, files in os.walk(os.path.join(ROOT, "Protos")):
        protos += [os.path.relpath(os.path.join(directory, f), os.path.join(ROOT, "Protos")) for f in files
                   if f.endswith(".proto")]
    with tempfile.NamedTemporaryFile(suffix=".pb") as out:
        subprocess.run(["protoc", "-I", os.path.join(ROOT, "Protos"), "-I", INCLUDE, "--include_imports",
                        "--include_source_info", "--descriptor_set_out=" + out.name] + sorted(protos), check=True)
        return descriptor_pb2.FileDescriptorSet.FromString(open(out.name, "rb").read())


def collect(files):
    messages, enums = {}, {}

    def walk(prefix, message):
        name = prefix + "." + message.name
        messages[name] = message
        for nested in message.nested_type:
            walk(name, nested)
        for enum in message.enum_type:
            enums[name + "." + enum.name] = enum

    for file in files.file:
        for message in file.message_type:
            walk("." + file.package, message)
        for enum in file.enum_type:
            enums["." + file.package + "." + enum.name] = enum
    return messages, enums


def schema_name(full):
    name = full.lstrip(".")
    if name.startswith("maps.fleetengine.delivery.v1."):
        # The Deliveries API's messages, prefixed so that none shares a name with an on-demand one.
        name = name[len("maps.fleetengine.delivery.v1."):].replace(".", "")
        return name if name.startswith("Delivery") else "Delivery" + name
    return name.replace("maps.fleetengine.v1.", "").replace("google.type.", "").replace(
        "google.geo.type.", "").replace(".", "")


def build(messages, enums):
    schemas = {}
    wanted = [n for n in messages if n.startswith(".maps.fleetengine.v1.") or n.startswith(".google.type.")
              or n.startswith(".google.geo.type.") or n.startswith(".maps.fleetengine.delivery.v1.")]
    for full in wanted:
        message = messages[full]
        properties = {}
        for field in message.field:
            if field.type == F.TYPE_MESSAGE:
                value = dict(WELL_KNOWN[field.type_name]) if field.type_name in WELL_KNOWN else {
                    "$ref": "#/components/schemas/" + schema_name(field.type_name)}
            elif field.type == F.TYPE_ENUM:
                value = {"type": "string", "enum": [v.name for v in enums[field.type_name].value]}
            else:
                value = dict(SCALARS[field.type])
            value.update(LIMITS.get((full.lstrip("."), field.name), {}))
            if field.label == F.LABEL_REPEATED:
                value = {"type": "array", "items": value}
            properties[field.json_name] = value
        schemas[schema_name(full)] = {"type": "object", "properties": properties, "additionalProperties": False}
    schemas["Error"] = {
        "type": "object", "required": ["error"],
        "properties": {"error": {"type": "object", "required": ["code", "message", "status"], "properties": {
            "code": {"type": "integer"}, "message": {"type": "string"}, "status": {"type": "string"}}}}}
    return schemas


def ref(name):
    return {"$ref": "#/components/schemas/" + name}


def query(name, schema, required=False):
    return {"name": name, "in": "query", "required": required, "schema": schema}


def operation(operation_id, summary, response, body=None, parameters=(), extra_errors=()):
    errors = [("400", "INVALID_ARGUMENT or FAILED_PRECONDITION"), ("401", "UNAUTHENTICATED: missing or invalid JWT"),
              ("403", "PERMISSION_DENIED: role, claim or provider")] + list(extra_errors)
    responses = {"200": {"description": "OK", "content": {"application/json": {"schema": ref(response)}}}}
    for code, text in errors:
        responses[code] = {"description": text, "content": {"application/json": {"schema": ref("Error")}}}
    result = {"operationId": operation_id, "summary": summary}
    if parameters:
        result["parameters"] = list(parameters)
    if body:
        result["requestBody"] = {"required": True, "content": {"application/json": {"schema": ref(body)}}}
    result["responses"] = responses
    return result


def path_parameter(name, schema, description=None):
    parameter = {"name": name, "in": "path", "required": True, "schema": schema}
    if description:
        parameter["description"] = description
    return parameter


# What each RPC is for, and the errors beyond 400/401/403 it may answer: documentation only. The method, path,
# path parameters, body and query parameters of every operation come from the RPC's google.api.http rule and its
# request message's descriptor, as the emulator's router derives them.
SUMMARIES = {
    "CreateVehicle": ("Create a vehicle (vehicles.create; claim vehicleid).", ["409"]),
    "GetVehicle": ("Get a vehicle (vehicles.get; claim vehicleid).", ["404"]),
    "UpdateVehicle": ("Update the fields in updateMask (vehicles.update, or vehicles.updateLocation for driver "
                      "fields; claim vehicleid).", ["404"]),
    "DeleteVehicle": ("Delete a vehicle without active trips (vehicles.delete).", ["404"]),
    "UpdateVehicleAttributes": ("Set attributes by key (vehicles.update).", ["404"]),
    "ListVehicles": ("List vehicles, filtered (vehicles.list; claim vehicleid \"*\").", []),
    "SearchVehicles": ("Vehicles that could serve a pickup (vehicles.search).", []),
    "CreateTrip": ("Create a trip (trips.create; claim tripid).", ["404", "409"]),
    "GetTrip": ("Get a trip (trips.get; claim tripid, or the assigned vehicle's vehicleid).", ["404"]),
    "UpdateTrip": ("Update the fields in updateMask (trips.update; trip_status also trips.updateState).", ["404"]),
    "DeleteTrip": ("Delete a trip that is not active on a vehicle (trips.delete).", ["404"]),
    "SearchTrips": ("A vehicle's trips, or all trips (trips.search).", []),
    "ReportBillableTrip": ("Report a billable trip (trips.create; claim tripid \"*\").", []),
    "CreateDeliveryVehicle": ("Create a delivery vehicle (deliveryvehicles.create; claim deliveryvehicleid).",
                              ["409"]),
    "GetDeliveryVehicle": ("Get a delivery vehicle (deliveryvehicles.get).", ["404"]),
    "UpdateDeliveryVehicle": ("Update the fields in updateMask; its stops assign and close tasks "
                              "(deliveryvehicles.update, .updateLocation, .updateVehicleStops).", ["404"]),
    "DeleteDeliveryVehicle": ("Delete a delivery vehicle without open tasks (deliveryvehicles.delete).", ["404"]),
    "ListDeliveryVehicles": ("List delivery vehicles, filtered (deliveryvehicles.list; claim deliveryvehicleid "
                             "\"*\").", []),
    "CreateTask": ("Create an OPEN task (tasks.create; claim taskid).", ["409"]),
    "BatchCreateTasks": ("Create up to 500 tasks, all or none (tasks.create; claim taskids).", ["409"]),
    "GetTask": ("Get a task (tasks.get).", ["404"]),
    "UpdateTask": ("Update the fields in updateMask (tasks.update).", ["404"]),
    "DeleteTask": ("Delete a task that is not OPEN on a vehicle (tasks.delete).", ["404"]),
    "ListTasks": ("List tasks, filtered (tasks.list; claim taskid \"*\").", []),
    "GetTaskTrackingInfo": ("What a consumer may see of a shipment (tasktrackinginfo.get; claim trackingid).",
                            ["404"]),
}
ERRORS = {"404": "NOT_FOUND", "409": "ALREADY_EXISTS"}


def derived_summary(method, comment):
    """An RPC without an entry in SUMMARIES: the first sentence of its comment in the proto, and the errors its verb
    implies (a create may find the ID taken; a get, update or delete may find nothing). So a new RPC needs no edit
    here: SUMMARIES only adds the permission and claim to what the proto says."""
    sentence = " ".join(comment.split()).split(". ")[0].rstrip(".")
    assert sentence, method.name + " has no comment in its proto to summarize it by"
    verb = next((v for v in ("Create", "Get", "Update", "Delete") if method.name.startswith(v)), None)
    return sentence + ".", {"Create": ["409"], None: []}.get(verb, ["404"])
# Limits the emulator checks on query parameters beyond their types, by JSON name.
QUERY_LIMITS = {
    "pageSize": {"minimum": 0, "maximum": 1000},
    "minimumCapacity": {"minimum": 0},
    "requiredAttributes": {"pattern": "^[^:|]+:[^|]*$"},
}
# The request header (RequestHeader / DeliveryRequestHeader) is accepted by every method, in the body or as
# header.* query parameters; it describes the calling SDK and changes no answer, so it is left out of the document.
UNDOCUMENTED = {"header"}
VERBS = ["get", "put", "post", "delete", "patch"]


def template_path(template):
    """An HttpRule path template as the emulator routes it: /v1/{name=providers/*/vehicles/*}:updateAttributes is
    /v1/providers/{provider}/vehicles/{vehicle}:updateAttributes, with its path parameters' names and the fields the
    variables bind (each wildcard is named after the collection before it, in the singular)."""
    rest, verb, depth = template[1:], "", 0
    for i, c in enumerate(template[1:]):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == ":" and depth == 0:
            rest, verb = template[1:i + 1], template[i + 2:]
    tokens, current, depth = [], "", 0
    for c in rest:
        if c == "/" and depth == 0:
            tokens.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        current += c
    tokens.append(current)
    parts, names, bound = [], [], []
    for token in tokens:
        if not token.startswith("{"):
            parts.append(token)
            continue
        field, _, pattern = token[1:-1].partition("=")
        bound.append(field)
        inner = (pattern or "*").split("/")
        for k, segment in enumerate(inner):
            if segment == "*":
                before = inner[k - 1] if k > 0 else field.split(".")[-1]
                name = before[:-1] if k > 0 and before.endswith("s") else before
                names.append(name)
                parts.append("{" + name + "}")
            else:
                parts.append(segment)
    return "/" + "/".join(parts) + (":" + verb if verb else ""), names, bound


def query_parameters(message_name, messages, enums, excluded, prefix="", visiting=()):
    """The request fields the query string may carry, as Google's transcoding binds them."""
    F_ = F
    result = []
    message = messages[message_name]
    for field in message.field:
        json_path = prefix + field.json_name
        if (prefix == "" and field.name in excluded) or (prefix == "" and field.name in UNDOCUMENTED):
            continue
        behaviors = list(field.options.Extensions[field_behavior_pb2.field_behavior])
        required = prefix == "" and field_behavior_pb2.REQUIRED in behaviors
        if field.type == F_.TYPE_MESSAGE and field.type_name not in WELL_KNOWN:
            if field.label != F_.LABEL_REPEATED and field.type_name not in visiting and len(visiting) < 6:
                result += query_parameters(field.type_name, messages, enums, set(), json_path + ".",
                                           visiting + (field.type_name,))
            continue
        if field_behavior_pb2.OUTPUT_ONLY in behaviors:
            continue
        if field.type == F_.TYPE_MESSAGE:
            value = dict(WELL_KNOWN[field.type_name])
        elif field.type == F_.TYPE_ENUM:
            value = {"type": "string", "enum": [v.name for v in enums[field.type_name].value]}
        else:
            value = dict(SCALARS[field.type])
        if field.type == F_.TYPE_STRING and field.name.endswith("_id") and prefix == "":
            value = dict(ID)
        value.update(QUERY_LIMITS.get(json_path, {}))
        if field.label == F_.LABEL_REPEATED:
            value = {"type": "array", "items": value}
            if required:
                value["minItems"] = 1
        result.append(query(json_path, value, required=required))
    return result


def paths(schemas, messages, enums, files):
    provider = path_parameter("provider", PROVIDER, "The provider (Google Cloud project) ID.")
    result = {}
    for file in files.file:
        if not file.package.startswith("maps.fleetengine."):
            continue
        comments = {tuple(location.path): location.leading_comments for location in file.source_code_info.location}
        for service_index, service in enumerate(file.service):
            for method_index, method in enumerate(service.method):
                rule = method.options.Extensions[annotations_pb2.http]
                verb = rule.WhichOneof("pattern")
                assert verb in VERBS, method.name + " has no google.api.http rule"
                path, names, bound = template_path(getattr(rule, verb))
                request = method.input_type
                body = None
                excluded = {b.split(".")[0] for b in bound}
                if rule.body == "*":
                    body = schema_name(request)
                    params = []
                    # The fields the path binds come from the URL, not the body.
                    for field in bound:
                        schemas[body]["properties"].pop(messages[request].field[[f.name for f in messages[
                            request].field].index(field)].json_name, None)
                elif rule.body:
                    field = next(f for f in messages[request].field if f.name == rule.body)
                    body = schema_name(field.type_name)
                    params = query_parameters(request, messages, enums, excluded | {rule.body})
                else:
                    params = query_parameters(request, messages, enums, excluded)
                summary, extra = SUMMARIES.get(method.name) or derived_summary(
                    method, comments.get((6, service_index, 2, method_index), ""))
                entry = result.setdefault(path, {"parameters": [
                    provider if name == "provider" else path_parameter(name, ID) for name in names]})
                output = "Empty" if method.output_type == ".google.protobuf.Empty" else schema_name(method.output_type)
                entry[verb] = operation(method.name, summary, output, body=body, parameters=params,
                                        extra_errors=[(code, ERRORS[code]) for code in extra])
    return {path: {key: entry[key] for key in ["parameters"] + VERBS if key in entry}
            for path, entry in sorted(result.items())}


def main():
    files = descriptors()
    messages, enums = collect(files)
    schemas = build(messages, enums)
    schemas["Empty"] = WELL_KNOWN[".google.protobuf.Empty"]
    document = {
        "openapi": "3.1.0",
        "info": {"title": "FleetAuth local Fleet Engine", "version": "1.1.0", "description":
                 "The maps.fleetengine.v1 and maps.fleetengine.delivery.v1 REST APIs as the FleetAuth emulator serves them, generated from the "
                 "project's protos by Scripts/generate-openapi.py. Every /v1 call needs a Fleet Engine JWT (RS256, "
                 "signed by a trusted service account) in the Authorization header: token problems are 401 "
                 "UNAUTHENTICATED; role, claim and provider problems are 403 PERMISSION_DENIED; bodies are "
                 "Google's {\"error\":{\"code\",\"message\",\"status\"}}. Bodies follow the proto3 JSON mapping."},
        "servers": [{"url": "http://127.0.0.1:8787"}],
        "security": [{"fleetEngineJWT": []}],
        "paths": paths(schemas, messages, enums, files),
        "components": {"securitySchemes": {"fleetEngineJWT": {"type": "http", "scheme": "bearer",
                                                              "bearerFormat": "JWT"}},
                       "schemas": dict(sorted(schemas.items()))},
    }
    header = ("# OpenAPI description of the FleetAuth emulator's REST API; served at GET /openapi.yaml.\n"
              "# Generated by Scripts/generate-openapi.py from Protos/; do not edit. Checked against the router by\n"
              "# Tests/FleetEngineEmulatorTests/OpenAPITests.swift.\n")
    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data):
            return True

    text = yaml.dump(document, Dumper=Dumper, sort_keys=False, width=120, allow_unicode=True)
    # Rewritten only when the text changed: an unchanged file keeps its modification time, and a build that follows
    # does not copy the resource again.
    previous = open(OUT).read() if os.path.exists(OUT) else None
    if previous != header + text:
        with open(OUT, "w") as out:
            out.write(header + text)
    print("wrote", os.path.relpath(OUT, ROOT), len(text.splitlines()), "lines")


if __name__ == "__main__":
    sys.exit(main())
