"""Google's annotations in our .proto files, checked against what Google's own Python packages carry.

- `Protos/google/api/*.proto` (our copies of the annotation definitions) against googleapis-common-protos: every
  message, field, enum value and extension we declare has Google's name, number and type.
- Every RPC's REST binding (google.api.http) against the paths, methods and bodies that Google's Deliveries client
  sends over its REST transport, and, for the on-demand API (whose Python client speaks gRPC only), against the
  published v1 definitions (googleapis, google/maps/fleetengine/v1/vehicle_api.proto and trip_api.proto).
- Every RPC's routing parameter names a field of its request; the method signatures are the Deliveries client's
  flattened arguments.
- Every field's google.api.field_behavior against the field's documentation in Google's clients, which opens with
  "Required.", "Output only.", "Immutable." or "Optional." exactly where the published field carries the annotation.
- Every resource reference names a resource type some message of ours declares.
- Every file's options (the packages and class names other languages' generators use) are the published ones.
- Walking the descriptors, every RPC of both APIs answers on REST at its annotated path exactly as it answers on
  gRPC (the same status and message), so an RPC added to the protos is covered without editing this file.
"""
import importlib
import inspect
import json
import os
import re
import subprocess
import urllib.error
import urllib.request

import grpc

import proto
import pytest
from google.api import annotations_pb2, client_pb2, field_behavior_pb2, http_pb2, resource_pb2, routing_pb2
from google.maps import fleetengine_delivery_v1 as fd
from google.maps import fleetengine_v1 as fe
from google.maps.fleetengine_delivery_v1.services.delivery_service.transports import rest_base
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

import test_google_client  # noqa: F401 (puts the on-demand client's descriptors in the default pool)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("maps.fleetengine.v1", "maps.fleetengine.delivery.v1")

# The on-demand API's bindings as Google publishes them (vehicle_api.proto, trip_api.proto; the deprecated
# UpdateVehicleLocation and SearchFuzzedVehicles are not in our protos). Google's Python client for this API has no
# REST transport to read them from.
ON_DEMAND = {
    "CreateVehicle": ("post", "/v1/{parent=providers/*}/vehicles", "vehicle"),
    "GetVehicle": ("get", "/v1/{name=providers/*/vehicles/*}", ""),
    "DeleteVehicle": ("delete", "/v1/{name=providers/*/vehicles/*}", ""),
    "UpdateVehicle": ("put", "/v1/{name=providers/*/vehicles/*}", "vehicle"),
    "UpdateVehicleAttributes": ("post", "/v1/{name=providers/*/vehicles/*}:updateAttributes", "*"),
    "ListVehicles": ("get", "/v1/{parent=providers/*}/vehicles", ""),
    "SearchVehicles": ("post", "/v1/{parent=providers/*}/vehicles:search", "*"),
    "CreateTrip": ("post", "/v1/{parent=providers/*}/trips", "trip"),
    "GetTrip": ("get", "/v1/{name=providers/*/trips/*}", ""),
    "DeleteTrip": ("delete", "/v1/{name=providers/*/trips/*}", ""),
    "ReportBillableTrip": ("post", "/v1/{name=providers/*/billableTrips/*}:report", "*"),
    "SearchTrips": ("post", "/v1/{parent=providers/*}/trips:search", "*"),
    "UpdateTrip": ("put", "/v1/{name=providers/*/trips/*}", "trip"),
}


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    out = tmp_path_factory.mktemp("descriptors") / "ours.pb"
    protos = sorted(os.path.relpath(os.path.join(d, f), os.path.join(ROOT, "Protos"))
                    for d, _, files in os.walk(os.path.join(ROOT, "Protos")) for f in files if f.endswith(".proto"))
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "Protos"), "-I", "/usr/include", "--include_imports",
                    f"--descriptor_set_out={out}", *protos], check=True)
    # The google.api modules imported above register their extensions, so the options parse into them.
    return {file.name: file for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file}


def methods(ours):
    for file in ours.values():
        if file.package in PACKAGES:
            for service in file.service:
                for method in service.method:
                    yield file, service, method


def messages(ours):
    """(full name, DescriptorProto) of every message in both APIs, nested ones included."""
    def walk(prefix, message):
        name = f"{prefix}.{message.name}"
        yield name, message
        for nested in message.nested_type:
            yield from walk(name, nested)

    for file in ours.values():
        if file.package in PACKAGES:
            for message in file.message_type:
                yield from walk(file.package, message)


def test_google_api_protos_are_googles(ours):
    pool = descriptor_pool.Default()
    for module in (annotations_pb2, client_pb2, field_behavior_pb2, http_pb2, resource_pb2, routing_pb2):
        theirs = module.DESCRIPTOR
        mine = ours[theirs.name]
        assert mine.package == theirs.package == "google.api"
        for message in mine.message_type:
            descriptor = pool.FindMessageTypeByName(f"google.api.{message.name}")
            assert {f.name: (f.number, f.type, f.type_name.lstrip(".")) for f in message.field} == {
                f.name: (f.number, f.type, (f.message_type or f.enum_type).full_name
                         if (f.message_type or f.enum_type) else "")
                for f in descriptor.fields if f.name in {g.name for g in message.field}}, message.name
            for enum in message.enum_type:
                assert {v.name: v.number for v in enum.value} == {
                    v.name: v.number for v in descriptor.enum_types_by_name[enum.name].values}, enum.name
        for enum in mine.enum_type:
            assert {v.name: v.number for v in enum.value} == {
                v.name: v.number for v in pool.FindEnumTypeByName(f"google.api.{enum.name}").values}
        for extension in mine.extension:
            theirs_extension = theirs.extensions_by_name[extension.name]
            assert (extension.number, extension.type, extension.extendee.lstrip(".")) == (
                theirs_extension.number, theirs_extension.type, theirs_extension.containing_type.full_name)
            assert (extension.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED) == \
                theirs_extension.is_repeated, extension.name


# The file options of Google's protos (googleapis, google/maps/fleetengine/…): what code generators for other languages
# read. Google's Python clients for these APIs are proto-plus modules, which carry no file options, so the published
# values are written here; google/api and google/type are compared with googleapis-common-protos' own descriptors.
PACKAGE_OPTIONS = {
    "maps.fleetengine.v1": {
        "csharp_namespace": "Google.Maps.FleetEngine.V1",
        "go_package": "cloud.google.com/go/maps/fleetengine/apiv1/fleetenginepb;fleetenginepb",
        "java_multiple_files": True, "java_package": "com.google.maps.fleetengine.v1", "objc_class_prefix": "CFE",
        "php_namespace": "Google\\Maps\\FleetEngine\\V1", "ruby_package": "Google::Maps::FleetEngine::V1"},
    "maps.fleetengine.delivery.v1": {
        "csharp_namespace": "Google.Maps.FleetEngine.Delivery.V1",
        "go_package": "cloud.google.com/go/maps/fleetengine/delivery/apiv1/deliverypb;deliverypb",
        "java_multiple_files": True, "java_package": "com.google.maps.fleetengine.delivery.v1",
        "objc_class_prefix": "CFED", "php_namespace": "Google\\Maps\\FleetEngine\\Delivery\\V1",
        "ruby_package": "Google::Maps::FleetEngine::Delivery::V1"},
}
OUTER_CLASSES = {
    "v1/fleetengine": "FleetEngine", "v1/header": "Headers", "v1/traffic": "TrafficProto", "v1/trip_api": "TripApi",
    "v1/trips": "Trips", "v1/vehicle_api": "VehicleApi", "v1/vehicles": "Vehicles", "delivery/v1/common": "Common",
    "delivery/v1/delivery_api": "DeliveryApi", "delivery/v1/delivery_vehicles": "DeliveryVehicles",
    "delivery/v1/header": "Headers", "delivery/v1/task_tracking_info": "TaskTrackingInfoProto",
    "delivery/v1/tasks": "Tasks",
}


def test_file_options_are_googles(ours):
    from google.type import latlng_pb2
    for module in (annotations_pb2, client_pb2, field_behavior_pb2, http_pb2, resource_pb2, routing_pb2, latlng_pb2):
        theirs = descriptor_pb2.FileOptions.FromString(module.DESCRIPTOR.GetOptions().SerializeToString())
        assert ours[module.DESCRIPTOR.name].options == theirs, module.DESCRIPTOR.name
    files = {name: file for name, file in ours.items() if file.package in PACKAGES}
    assert sorted(name.removeprefix("google/maps/fleetengine/").removesuffix(".proto") for name in files) == sorted(
        OUTER_CLASSES)
    for name, file in files.items():
        options = {field.name: value for field, value in file.options.ListFields()
                   if field.name != "uninterpreted_option" and not field.is_extension}
        key = name.removeprefix("google/maps/fleetengine/").removesuffix(".proto")
        assert options == {**PACKAGE_OPTIONS[file.package], "java_outer_classname": OUTER_CLASSES[key]}, name
    assert ours["google/geo/type/viewport.proto"].options.java_package == "com.google.geo.type"


def binding(method):
    rule = method.options.Extensions[annotations_pb2.http]
    verb = rule.WhichOneof("pattern")
    return verb, getattr(rule, verb), rule.body


def test_delivery_bindings_are_the_rest_clients(ours):
    transport = rest_base._BaseDeliveryServiceRestTransport
    checked = 0
    for file, service, method in methods(ours):
        if file.package != "maps.fleetengine.delivery.v1":
            continue
        options = getattr(transport, f"_Base{method.name}")._get_http_options()
        assert len(options) == 1, method.name
        assert binding(method) == (options[0]["method"], options[0]["uri"], options[0].get("body", "")), method.name
        checked += 1
    assert checked == 12


def test_on_demand_bindings_are_the_published_ones(ours):
    found = {method.name: binding(method) for file, _, method in methods(ours) if file.package == "maps.fleetengine.v1"}
    assert found == ON_DEMAND


CLIENTS = {"DeliveryService": fd.DeliveryServiceClient, "VehicleService": fe.VehicleServiceClient,
           "TripService": fe.TripServiceClient}


def test_routing_and_method_signatures(ours):
    requests = dict(messages(ours))
    signed = 0
    for file, service, method in methods(ours):
        assert service.options.Extensions[client_pb2.default_host] == "fleetengine.googleapis.com"
        request = requests[method.input_type.lstrip(".")]
        routing = method.options.Extensions[routing_pb2.routing].routing_parameters
        assert len(routing) == 1 and routing[0].path_template == "{provider_id=providers/*}", method.name
        # The routed field is the one the path binds, and it exists in the request (a dotted path for updates).
        verb, path, _ = binding(method)
        assert re.match(r"/v1/\{([\w.]+)=", path).group(1) == routing[0].field, method.name
        head = routing[0].field.split(".")[0]
        assert head in {f.name for f in request.field}, method.name
        # A method signature is what Google's client flattens into keyword arguments, in every client: the
        # on-demand ones too (DeleteVehicle and DeleteTrip take `name`).
        signatures = list(method.options.Extensions[client_pb2.method_signature])
        client = CLIENTS[service.name]
        flattened = [name for name, parameter in inspect.signature(
            getattr(client, re.sub(r"(?<!^)([A-Z])", r"_\1", method.name).lower())
        ).parameters.items() if parameter.kind == inspect.Parameter.KEYWORD_ONLY
            and name not in ("retry", "timeout", "metadata")]
        assert signatures == ([",".join(flattened)] if flattened else []), method.name
        signed += bool(signatures)
    assert signed == 13


BEHAVIOURS = [("Required.", field_behavior_pb2.REQUIRED), ("Output only.", field_behavior_pb2.OUTPUT_ONLY),
              ("Immutable.", field_behavior_pb2.IMMUTABLE), ("Optional.", field_behavior_pb2.OPTIONAL),
              ("Input only.", field_behavior_pb2.INPUT_ONLY)]


def documented_fields():
    """(message, field) -> the field's documentation in Google's clients, nested messages' fields included."""
    found = {}
    for package, modules in [
            ("google.maps.fleetengine_v1.types", ("fleetengine", "header", "traffic", "trip_api", "trips",
                                                  "vehicle_api", "vehicles")),
            ("google.maps.fleetengine_delivery_v1.types", ("common", "delivery_api", "delivery_vehicles", "header",
                                                           "task_tracking_info", "tasks"))]:
        for name in modules:
            module = importlib.import_module(f"{package}.{name}")

            def walk(cls):
                full = cls.pb(cls()).DESCRIPTOR.full_name
                # A nested message's docstring is indented deeper than its parent's: read it dedented.
                sections = (inspect.cleandoc(cls.__doc__ or "") + "\n").split("\nAttributes:\n")
                if len(sections) > 1:
                    for match in re.finditer(r"\n?    (\w+) \(([^)]*)\):\n((?:        .*\n|\s*\n)*)", sections[1]):
                        found[(full, match.group(1).rstrip("_"))] = " ".join(match.group(3).split())
                for nested in vars(cls).values():
                    if isinstance(nested, type) and issubclass(nested, proto.Message) and nested is not cls:
                        walk(nested)

            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, proto.Message) and value.__module__ == module.__name__:
                    walk(value)
    return found


def documented_behaviours():
    """(message, field) -> behaviours, from the opening words of each field's documentation in Google's clients."""
    found = {}
    for key, text in documented_fields().items():
        kinds = [value for words, value in BEHAVIOURS if re.search(r"(^|\. )" + re.escape(words), text[:60])]
        if kinds:
            found[key] = kinds
    return found


def test_deprecated_fields_are_the_documented_ones(ours):
    """A field Google's documentation calls deprecated ("Deprecated.", "Deprecated: use …") carries
    `deprecated = true`, and no other does; so does the one deprecated message, TerminalPointId."""
    marked = {(name, field.name) for name, message in messages(ours) for field in message.field
              if field.options.deprecated}
    documented = {key for key, text in documented_fields().items() if re.search(r"\bDeprecated\b", text)}
    assert marked == documented
    assert len(marked) == 22
    assert [name for name, message in messages(ours) if message.options.deprecated] == [
        "maps.fleetengine.v1.TerminalPointId"]


def test_field_behaviours_are_the_documented_ones(ours):
    annotated = {}
    for name, message in messages(ours):
        for field in message.field:
            kinds = list(field.options.Extensions[field_behavior_pb2.field_behavior])
            if kinds:
                annotated[(name, field.name)] = kinds
    documented = documented_behaviours()
    assert annotated == documented
    # A few the emulator's rules rest on, named so that a parsing slip above cannot empty both sides.
    for key, kinds in [(("maps.fleetengine.delivery.v1.Task", "task_duration"),
                        [field_behavior_pb2.REQUIRED, field_behavior_pb2.IMMUTABLE]),
                       (("maps.fleetengine.v1.Trip", "number_of_passengers"), [field_behavior_pb2.IMMUTABLE]),
                       (("maps.fleetengine.v1.Vehicle", "current_trips"), [field_behavior_pb2.OUTPUT_ONLY]),
                       (("maps.fleetengine.v1.SearchVehiclesRequest", "pickup_radius_meters"),
                        [field_behavior_pb2.REQUIRED]),
                       # Nested messages' fields, which a reading of top-level docstrings alone misses.
                       (("maps.fleetengine.v1.VisualTrafficReportPolylineRendering.RoadStretch", "offset_meters"),
                        [field_behavior_pb2.REQUIRED]),
                       (("maps.fleetengine.delivery.v1.VehicleStop.TaskInfo", "task_duration"),
                        [field_behavior_pb2.OUTPUT_ONLY])]:
        assert annotated[key] == kinds, key
    assert len(annotated) > 100


def test_resource_references_name_declared_resources(ours):
    declared = {}
    for name, message in messages(ours):
        resource = message.options.Extensions[resource_pb2.resource]
        if resource.type:
            declared[resource.type] = list(resource.pattern)
    assert set(declared) == {f"fleetengine.googleapis.com/{kind}" for kind in (
        "Vehicle", "Trip", "DeliveryVehicle", "Task", "TaskTrackingInfo")}
    # The provider is declared once, by the Deliveries API's file, as Google's delivery_api.proto declares it.
    defined = {(file.name, definition.type, tuple(definition.pattern)) for file in ours.values()
               for definition in file.options.Extensions[resource_pb2.resource_definition]}
    assert defined == {("google/maps/fleetengine/delivery/v1/delivery_api.proto", "fleetengine.googleapis.com/Provider",
                        ("providers/{provider}",))}
    references = 0
    for name, message in messages(ours):
        for field in message.field:
            reference = field.options.Extensions[resource_pb2.resource_reference]
            kind = reference.type or reference.child_type
            if kind:
                assert kind in declared, (name, field.name)
                references += 1
    assert references == 13


def concrete(template, rpc):
    """A path template's variable made concrete: `providers/*` is the demo provider, every other `*` a name that
    exists nowhere (so each RPC answers with its own refusal, which both transports must agree on)."""
    parts = template.split("/")
    return "/".join("demo-project" if part == "*" and index == 1 else f"walk-{rpc.lower()}" if part == "*" else part
                    for index, part in enumerate(parts))


def test_every_rpc_answers_on_rest_at_its_annotated_path_as_on_grpc(ours, emulator):
    tokens = {"maps.fleetengine.v1": emulator.token("service-super-user", "--type", "server"),
              "maps.fleetengine.delivery.v1": emulator.token("delivery-super-user", "--type", "delivery_server")}
    pool = descriptor_pool.Default()
    fd.Task.pb(fd.Task())  # both clients' descriptors are in the default pool (the on-demand one through test_google_client)
    checked = 0
    for file, service, method in methods(ours):
        verb, path, body = binding(method)
        request = message_factory.GetMessageClass(pool.FindMessageTypeByName(method.input_type.lstrip(".")))()
        # Fill each path variable (a dotted field path) and expand the template.
        url = path
        for variable in re.finditer(r"\{([\w.]+)=([^}]+)\}", path):
            value = concrete(variable.group(2), method.name)
            target = request
            *heads, last = variable.group(1).split(".")
            for head in heads:
                target = getattr(target, head)
            setattr(target, last, value)
            url = url.replace(variable.group(0), value)
        if body and body != "*":
            # REST sends `{}` as the body field, which transcodes to that field set and empty: the same over gRPC.
            getattr(request, body).SetInParent()
        token = tokens[file.package]
        try:
            emulator.channel.unary_unary(
                f"/{file.package}.{service.name}/{method.name}",
                request_serializer=lambda message: message.SerializeToString(),
                response_deserializer=lambda data: data,
            )(request, metadata=[("authorization", f"Bearer {token}")], timeout=30)
            over_grpc = ("OK", "")
        except grpc.RpcError as error:
            over_grpc = (error.code().name, error.details())
        payload = None
        if body:
            fields = json_format.MessageToDict(request) if body == "*" else {}
            for variable in re.finditer(r"\{([\w.]+)=", path):
                fields.pop(variable.group(1), None)
            payload = json.dumps(fields).encode()
        http = urllib.request.Request(f"{emulator.rest}{url}", data=payload, method=verb.upper())
        http.add_header("Authorization", f"Bearer {token}")
        if payload is not None:
            http.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(http, timeout=30):
                over_rest = ("OK", "")
        except urllib.error.HTTPError as error:
            answer = json.loads(error.read() or b"{}").get("error", {})
            over_rest = (answer.get("status"), answer.get("message"))
        assert over_rest == over_grpc, (method.name, verb, url)
        checked += 1
    assert checked == 25


def test_deprecated_rpcs_are_not_served(emulator):
    """UpdateVehicleLocation and SearchFuzzedVehicles are gone from Google's published protos: over gRPC they are
    UNIMPLEMENTED, as any method a service does not have; over REST their old paths are refused, never served."""
    token = emulator.token("service-super-user", "--type", "server")
    for method in ["UpdateVehicleLocation", "SearchFuzzedVehicles"]:
        with pytest.raises(grpc.RpcError) as refused:
            emulator.channel.unary_unary(
                f"/maps.fleetengine.v1.VehicleService/{method}",
                request_serializer=lambda message: message,
                response_deserializer=lambda data: data,
            )(b"", metadata=[("authorization", f"Bearer {token}")], timeout=30)
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED, method
    for verb, path, status in [("PUT", "vehicles/walk-v:updateLocation", 400), ("POST", "vehicles:searchFuzzed", 404)]:
        http = urllib.request.Request(f"{emulator.rest}/v1/providers/demo-project/{path}", data=b"{}", method=verb)
        http.add_header("Authorization", f"Bearer {token}")
        http.add_header("Content-Type", "application/json")
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(http, timeout=30)
        assert answer.value.code == status, path
