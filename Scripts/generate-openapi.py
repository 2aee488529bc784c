#!/usr/bin/env python3
"""Writes Sources/FleetEngineEmulator/Resources/openapi.yaml: the emulator's REST API as OpenAPI 3.1.

The component schemas are generated from the .proto files in Protos/ (compiled by protoc into a descriptor set),
by the proto3 JSON mapping: lowerCamelCase names, enums by name, 64-bit integers as strings or numbers,
Timestamps and Durations as strings, wrappers as their values. The paths are listed below, one per RPC, as the
emulator routes them. Run it after changing a .proto or a route (needs protoc and PyYAML).
"""
import os
import subprocess
import sys
import tempfile

import yaml
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
                        "--descriptor_set_out=" + out.name] + sorted(protos), check=True)
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


def paths(schemas):
    provider = path_parameter("provider", PROVIDER, "The provider (Google Cloud project) ID.")
    not_found = [("404", "NOT_FOUND")]
    exists = [("409", "ALREADY_EXISTS")]
    mask = query("updateMask", {"type": "string", "minLength": 1}, required=True)
    timestamp = {"type": "string", "format": "date-time"}
    enum = lambda message, field: {"type": "string", "enum": next(
        p for n, p in schemas[message]["properties"].items() if n == field)["enum"]}
    list_enum = lambda message, field: {"type": "array", "items": schemas[message]["properties"][field]["items"]}
    return {
        "/v1/providers/{provider}/vehicles": {
            "parameters": [provider],
            "post": operation("CreateVehicle", "Create a vehicle (vehicles.create; claim vehicleid).", "Vehicle",
                              body="Vehicle", parameters=[query("vehicleId", ID, required=True)], extra_errors=exists),
            "get": operation("ListVehicles", "List vehicles, filtered (vehicles.list; claim vehicleid \"*\").",
                             "ListVehiclesResponse", parameters=[
                                 query("pageSize", {"type": "integer", "minimum": 0, "maximum": 1000}),
                                 query("pageToken", {"type": "string"}),
                                 query("minimumCapacity", {"type": "integer", "minimum": 0}),
                                 query("tripTypes", list_enum("ListVehiclesRequest", "tripTypes")),
                                 query("maximumStaleness", WELL_KNOWN[".google.protobuf.Duration"]),
                                 query("vehicleTypeCategories",
                                       dict(list_enum("ListVehiclesRequest", "vehicleTypeCategories"), minItems=1),
                                       required=True),
                                 query("requiredAttributes", {"type": "array", "items": {
                                     "type": "string", "pattern": "^[^:|]+:[^|]*$"}}),
                                 query("vehicleState", enum("ListVehiclesRequest", "vehicleState")),
                                 query("onTripOnly", {"type": "boolean"}),
                             ]),
        },
        "/v1/providers/{provider}/vehicles/{vehicle}": {
            "parameters": [provider, path_parameter("vehicle", ID)],
            "get": operation("GetVehicle", "Get a vehicle (vehicles.get; claim vehicleid).", "Vehicle",
                             parameters=[query("currentRouteSegmentVersion", timestamp),
                                         query("waypointsVersion", timestamp)], extra_errors=not_found),
            "put": operation("UpdateVehicle", "Update the fields in updateMask (vehicles.update, or "
                             "vehicles.updateLocation for driver fields; claim vehicleid).", "Vehicle",
                             body="Vehicle", parameters=[mask], extra_errors=not_found),
            "delete": operation("DeleteVehicle", "Delete a vehicle without active trips (vehicles.delete).",
                                "Empty", extra_errors=not_found),
        },
        "/v1/providers/{provider}/vehicles/{vehicle}:updateAttributes": {
            "parameters": [provider, path_parameter("vehicle", ID)],
            "post": operation("UpdateVehicleAttributes", "Set attributes by key (vehicles.update).",
                              "UpdateVehicleAttributesResponse", body="UpdateVehicleAttributesRequest",
                              extra_errors=not_found),
        },
        "/v1/providers/{provider}/vehicles:search": {
            "parameters": [provider],
            "post": operation("SearchVehicles", "Vehicles that could serve a pickup (vehicles.search).",
                              "SearchVehiclesResponse", body="SearchVehiclesRequest"),
        },
        "/v1/providers/{provider}/trips": {
            "parameters": [provider],
            "post": operation("CreateTrip", "Create a trip (trips.create; claim tripid).", "Trip", body="Trip",
                              parameters=[query("tripId", ID, required=True)], extra_errors=not_found + exists),
        },
        "/v1/providers/{provider}/trips/{trip}": {
            "parameters": [provider, path_parameter("trip", ID)],
            "get": operation("GetTrip", "Get a trip (trips.get; claim tripid, or the assigned vehicle's vehicleid).",
                             "Trip", parameters=[query("view", enum("GetTripRequest", "view"))],
                             extra_errors=not_found),
            "put": operation("UpdateTrip", "Update the fields in updateMask (trips.update; trip_status also "
                             "trips.updateState).", "Trip", body="Trip", parameters=[mask], extra_errors=not_found),
            "delete": operation("DeleteTrip", "Delete a trip that is not active on a vehicle (trips.delete).",
                                "Empty", extra_errors=not_found),
        },
        "/v1/providers/{provider}/trips:search": {
            "parameters": [provider],
            "post": operation("SearchTrips", "A vehicle's trips, or all trips (trips.search).",
                              "SearchTripsResponse", body="SearchTripsRequest"),
        },
        "/v1/providers/{provider}/billableTrips/{billableTrip}:report": {
            "parameters": [provider, path_parameter("billableTrip", ID)],
            "post": operation("ReportBillableTrip", "Report a billable trip (trips.create; claim tripid \"*\").",
                              "Empty", body="ReportBillableTripRequest"),
        },
        # The Deliveries API (maps.fleetengine.delivery.v1).
        "/v1/providers/{provider}/deliveryVehicles": {
            "parameters": [provider],
            "post": operation("CreateDeliveryVehicle", "Create a delivery vehicle (deliveryvehicles.create; claim "
                              "deliveryvehicleid).", "DeliveryVehicle", body="DeliveryVehicle",
                              parameters=[query("deliveryVehicleId", ID, required=True)], extra_errors=exists),
            "get": operation("ListDeliveryVehicles", "List delivery vehicles, filtered (deliveryvehicles.list; claim "
                             "deliveryvehicleid \"*\").", "DeliveryListDeliveryVehiclesResponse", parameters=[
                                 query("pageSize", {"type": "integer", "minimum": 0, "maximum": 1000}),
                                 query("pageToken", {"type": "string"}), query("filter", {"type": "string"})]),
        },
        "/v1/providers/{provider}/deliveryVehicles/{deliveryVehicle}": {
            "parameters": [provider, path_parameter("deliveryVehicle", ID)],
            "get": operation("GetDeliveryVehicle", "Get a delivery vehicle (deliveryvehicles.get).", "DeliveryVehicle",
                             extra_errors=not_found),
            "patch": operation("UpdateDeliveryVehicle", "Update the fields in updateMask; its stops assign and close "
                               "tasks (deliveryvehicles.update, .updateLocation, .updateVehicleStops).",
                               "DeliveryVehicle", body="DeliveryVehicle", parameters=[mask], extra_errors=not_found),
            "delete": operation("DeleteDeliveryVehicle", "Delete a delivery vehicle without open tasks "
                                "(deliveryvehicles.delete).", "Empty", extra_errors=not_found),
        },
        "/v1/providers/{provider}/tasks": {
            "parameters": [provider],
            "post": operation("CreateTask", "Create an OPEN task (tasks.create; claim taskid).", "DeliveryTask",
                              body="DeliveryTask", parameters=[query("taskId", ID, required=True)],
                              extra_errors=exists),
            "get": operation("ListTasks", "List tasks, filtered (tasks.list; claim taskid \"*\").",
                             "DeliveryListTasksResponse", parameters=[
                                 query("pageSize", {"type": "integer", "minimum": 0, "maximum": 1000}),
                                 query("pageToken", {"type": "string"}), query("filter", {"type": "string"})]),
        },
        "/v1/providers/{provider}/tasks:batchCreate": {
            "parameters": [provider],
            "post": operation("BatchCreateTasks", "Create up to 500 tasks, all or none (tasks.create; claim taskids).",
                              "DeliveryBatchCreateTasksResponse", body="DeliveryBatchCreateTasksRequest",
                              extra_errors=exists),
        },
        "/v1/providers/{provider}/tasks/{task}": {
            "parameters": [provider, path_parameter("task", ID)],
            "get": operation("GetTask", "Get a task (tasks.get).", "DeliveryTask", extra_errors=not_found),
            "patch": operation("UpdateTask", "Update the fields in updateMask (tasks.update).", "DeliveryTask",
                               body="DeliveryTask", parameters=[mask], extra_errors=not_found),
            "delete": operation("DeleteTask", "Delete a task that is not OPEN on a vehicle (tasks.delete).", "Empty",
                                extra_errors=not_found),
        },
        "/v1/providers/{provider}/taskTrackingInfo/{taskTrackingInfo}": {
            "parameters": [provider, path_parameter("taskTrackingInfo", ID, "The tracking ID.")],
            "get": operation("GetTaskTrackingInfo", "What a consumer may see of a shipment (tasktrackinginfo.get; "
                             "claim trackingid).", "DeliveryTaskTrackingInfo", extra_errors=not_found),
        },
    }


def main():
    messages, enums = collect(descriptors())
    schemas = build(messages, enums)
    schemas["Empty"] = WELL_KNOWN[".google.protobuf.Empty"]
    # Request messages whose path fields come from the URL: those fields are not in the body.
    for request, fields in [("UpdateVehicleAttributesRequest", ["name"]), ("SearchVehiclesRequest", ["parent"]),
                            ("SearchTripsRequest", ["parent"]), ("ReportBillableTripRequest", ["name"]),
                            ("DeliveryBatchCreateTasksRequest", ["parent"])]:
        for field in fields:
            del schemas[request]["properties"][field]
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
        "paths": paths(schemas),
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
