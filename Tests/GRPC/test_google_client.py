"""Google's official Python client (google-maps-fleetengine, over grpcio) against the emulator, unchanged.

Starts the built `fleetauth emulator` ($FLEETAUTH_BIN, default .build/debug/fleetauth) with REST and gRPC on free
ports, mints tokens with `fleetauth token mint` from the keys it provisions, and talks to it the way a backend
talks to Fleet Engine: the client's own gRPC transport on an insecure channel, the token as call metadata.

Checks dispatch, driver and consumer flows, filters and paging, error codes, REST and gRPC reading each other's
writes, REST answers equal to `json_format` of the gRPC answers, and our .proto files against the client's.
"""
import inspect
import json
import os
import sys
import re
import subprocess
import time
import typing
import urllib.error
import urllib.request

import grpc
import pytest
from google.api_core import exceptions
from google.maps import fleetengine_v1 as fe
from google.maps.fleetengine_v1.services.trip_service.transports import TripServiceGrpcTransport
from google.maps.fleetengine_v1.services.vehicle_service.transports import VehicleServiceGrpcTransport
from google.protobuf import descriptor_pb2, descriptor_pool, json_format

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FLEETAUTH_BIN", os.path.join(ROOT, ".build", "debug", "fleetauth"))
PROVIDER = "providers/demo-project"


def fleetauth(*args, cwd=None):
    result = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


class Emulator:
    def __init__(self, directory):
        self.directory = directory
        self.log = open(os.path.join(directory, "emulator.log"), "w+")
        self.process = subprocess.Popen(
            [BIN, "emulator", "--in-memory", "--port", "0", "--grpc-port", "0"],
            cwd=directory, stdout=self.log, stderr=subprocess.STDOUT)
        def listening():
            with open(self.log.name) as f:
                text = f.read()
            rest = re.search(r"listening on http://127\.0\.0\.1:(\d+)", text)
            grpc_port = re.search(r"gRPC listening on 127\.0\.0\.1:(\d+)", text)
            if self.process.poll() is not None:
                raise AssertionError(f"the emulator stopped:\n{text}")
            return (rest, grpc_port) if rest and grpc_port else None
        try:
            rest, grpc_port = wait_until(listening, "the emulator printing its REST and gRPC ports")
        except AssertionError:
            self.stop()
            raise
        self.rest = f"http://127.0.0.1:{rest.group(1)}"
        self.grpc_target = f"127.0.0.1:{grpc_port.group(1)}"
        self.channel = grpc.insecure_channel(self.grpc_target)
        # Google's clients, unchanged: only their transport points at the emulator.
        self.vehicles = fe.VehicleServiceClient(transport=VehicleServiceGrpcTransport(channel=self.channel))
        self.trips = fe.TripServiceClient(transport=TripServiceGrpcTransport(channel=self.channel))

    def token(self, role_file, *args):
        return fleetauth("token", "mint", "--key", f"fleet-engine-data/keys/{role_file}.json", *args,
                         cwd=self.directory)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture(scope="module")
def tokens(emulator):
    class Tokens:
        server = emulator.token("service-super-user", "--type", "server")

        @staticmethod
        def driver(vehicle):
            return emulator.token("driver-sdk-user", "--type", "driver", "--vehicle", vehicle)

        @staticmethod
        def consumer(trip):
            return emulator.token("consumer-sdk-user", "--type", "consumer", "--trip", trip)

    return Tokens


def auth(token):
    return [("authorization", f"Bearer {token}")]


def rest(emulator, method, path, token, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{emulator.rest}/v1/{path}", data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def as_json(message):
    """The proto3 JSON mapping of a proto-plus message, by protobuf's own json_format (the referee)."""
    return json_format.MessageToDict(type(message).pb(message))


def point(lat, lng):
    return fe.TerminalLocation(point={"latitude": lat, "longitude": lng})


def new_vehicle(state=fe.VehicleState.ONLINE, lat=37.40, lng=-122.10, attributes=(), category="AUTO"):
    return fe.Vehicle(
        vehicle_state=state,
        supported_trip_types=[fe.TripType.EXCLUSIVE, fe.TripType.SHARED],
        maximum_capacity=4,
        vehicle_type={"category": category},
        attributes=[fe.VehicleAttribute(key=k, value=v) for k, v in attributes],
        last_location={"location": {"latitude": lat, "longitude": lng}},
    )


def search_request(**extra):
    request = dict(
        parent=PROVIDER, pickup_point=point(37.40, -122.10), dropoff_point=point(37.45, -122.15),
        pickup_radius_meters=3000, count=10, minimum_capacity=1, trip_types=[fe.TripType.EXCLUSIVE],
        vehicle_types=[{"category": "AUTO"}], order_by=fe.SearchVehiclesRequest.VehicleMatchOrder.PICKUP_POINT_ETA)
    request.update(extra)
    return fe.SearchVehiclesRequest(**request)


@pytest.fixture(scope="module")
def fleet(emulator, tokens):
    """A dispatcher's fleet, created over gRPC with a server token: three vehicles and two trips."""
    server = auth(tokens.server)
    for vehicle_id, vehicle in [
        ("py-a", new_vehicle(attributes=[("color", "red")])),
        ("py-b", new_vehicle(lat=37.41, lng=-122.11, attributes=[("color", "blue")])),
        ("py-c", new_vehicle(state=fe.VehicleState.OFFLINE, category="TWO_WHEELER")),
    ]:
        created = emulator.vehicles.create_vehicle(
            fe.CreateVehicleRequest(parent=PROVIDER, vehicle_id=vehicle_id, vehicle=vehicle), metadata=server)
        assert created.name == f"{PROVIDER}/vehicles/{vehicle_id}"
    for trip_id in ["py-t1", "py-t2"]:
        trip = fe.Trip(trip_type=fe.TripType.EXCLUSIVE, pickup_point=point(37.40, -122.10),
                       dropoff_point=point(37.50, -122.20))
        created = emulator.trips.create_trip(
            fe.CreateTripRequest(parent=PROVIDER, trip_id=trip_id, trip=trip), metadata=server)
        assert created.trip_status == fe.TripStatus.NEW
    return ["py-a", "py-b", "py-c"]


def test_dispatch_driver_and_consumer(emulator, tokens, fleet):
    server = auth(tokens.server)
    assigned = emulator.trips.update_trip(
        fe.UpdateTripRequest(name=f"{PROVIDER}/trips/py-t1", trip=fe.Trip(vehicle_id="py-a"),
                             update_mask={"paths": ["vehicle_id"]}), metadata=server)
    assert assigned.vehicle_id == "py-a"

    # The driver reports its location with its own token.
    moved = emulator.vehicles.update_vehicle(
        fe.UpdateVehicleRequest(
            name=f"{PROVIDER}/vehicles/py-a",
            vehicle=fe.Vehicle(last_location={"location": {"latitude": 37.401, "longitude": -122.101}}),
            update_mask={"paths": ["last_location"]}),
        metadata=auth(tokens.driver("py-a")))
    assert moved.last_location.location.latitude == pytest.approx(37.401)
    assert moved.current_trips == ["py-t1"]
    emulator.trips.update_trip(
        fe.UpdateTripRequest(name=f"{PROVIDER}/trips/py-t1", trip=fe.Trip(trip_status=fe.TripStatus.ENROUTE_TO_PICKUP),
                             update_mask={"paths": ["trip_status"]}), metadata=server)  # a backend's call

    # The consumer follows its trip.
    trip = emulator.trips.get_trip(fe.GetTripRequest(name=f"{PROVIDER}/trips/py-t1"),
                                   metadata=auth(tokens.consumer("py-t1")))
    assert trip.trip_status == fe.TripStatus.ENROUTE_TO_PICKUP
    assert trip.vehicle_id == "py-a"
    assert trip.remaining_waypoints[0].waypoint_type == fe.WaypointType.PICKUP_WAYPOINT_TYPE
    assert trip.remaining_distance_meters > 0  # proto-plus unwraps Int32Value
    assert trip.eta_to_first_waypoint.timestamp() > time.time() - 5

    found = emulator.trips.search_trips(fe.SearchTripsRequest(parent=PROVIDER, vehicle_id="py-a", active_trips_only=True),
                                        metadata=auth(tokens.driver("py-a")))
    assert [t.name for t in found.trips] == [f"{PROVIDER}/trips/py-t1"]
    emulator.trips.report_billable_trip(
        fe.ReportBillableTripRequest(name=f"{PROVIDER}/billableTrips/py-t1", country_code="US"), metadata=server)


def test_search_and_list_with_filters_and_paging(emulator, tokens, fleet):
    server = auth(tokens.server)
    matches = emulator.vehicles.search_vehicles(search_request(), metadata=server).matches
    assert {m.vehicle.name.split("/")[-1] for m in matches} >= {"py-b"}
    for match in matches:
        assert match.trip_type == fe.TripType.EXCLUSIVE
        assert match.vehicle_pickup_eta.timestamp() > 0
    red = emulator.vehicles.search_vehicles(
        search_request(required_attributes=[fe.VehicleAttribute(key="color", string_value="blue")]), metadata=server)
    assert [m.vehicle.name.split("/")[-1] for m in red.matches] == ["py-b"]
    filtered = emulator.vehicles.search_vehicles(search_request(filter='attributes.color="blue"'), metadata=server)
    assert [m.vehicle.name.split("/")[-1] for m in filtered.matches] == ["py-b"]

    # vehicle_type_categories is required ("Required."): without it, INVALID_ARGUMENT naming it.
    with pytest.raises(exceptions.InvalidArgument, match="vehicleTypeCategories is required"):
        emulator.vehicles.list_vehicles(fe.ListVehiclesRequest(parent=PROVIDER), metadata=server)
    Category = fe.Vehicle.VehicleType.Category
    every = [Category.AUTO, Category.TWO_WHEELER]  # the fleet's categories
    online = emulator.vehicles.list_vehicles(
        fe.ListVehiclesRequest(parent=PROVIDER, vehicle_type_categories=every, vehicle_state=fe.VehicleState.ONLINE),
        metadata=server)
    names = [v.name.split("/")[-1] for v in online]
    assert "py-c" not in names and {"py-a", "py-b"} <= set(names)
    bikes = emulator.vehicles.list_vehicles(
        fe.ListVehiclesRequest(parent=PROVIDER, vehicle_type_categories=[Category.TWO_WHEELER]), metadata=server)
    assert [v.name.split("/")[-1] for v in bikes] == ["py-c"]
    blue = emulator.vehicles.list_vehicles(
        fe.ListVehiclesRequest(parent=PROVIDER, vehicle_type_categories=every, required_attributes=["color:blue"]),
        metadata=server)
    assert [v.name.split("/")[-1] for v in blue] == ["py-b"]

    # Paging: the client's pager follows next_page_token with the same metadata.
    pager = emulator.vehicles.list_vehicles(
        fe.ListVehiclesRequest(parent=PROVIDER, vehicle_type_categories=every, page_size=1), metadata=server)
    first_page = next(iter(pager.pages))
    assert len(first_page.vehicles) == 1 and first_page.next_page_token
    assert first_page.total_size >= 3
    everything = [v.name.split("/")[-1] for v in pager]
    assert everything == sorted(everything) and {"py-a", "py-b", "py-c"} <= set(everything)


def test_errors_are_canonical_codes(emulator, tokens, fleet):
    get = fe.GetVehicleRequest(name=f"{PROVIDER}/vehicles/py-a")
    with pytest.raises(exceptions.PermissionDenied):
        emulator.vehicles.get_vehicle(get, metadata=auth(tokens.driver("py-b")))
    with pytest.raises(exceptions.PermissionDenied):
        emulator.vehicles.update_vehicle(
            fe.UpdateVehicleRequest(name=f"{PROVIDER}/vehicles/py-b",
                                    vehicle=fe.Vehicle(last_location={"location": {"latitude": 1, "longitude": 1}}),
                                    update_mask={"paths": ["last_location"]}),
            metadata=auth(tokens.driver("py-a")))
    bad_signature = tokens.server[:-4] + ("AAAA" if not tokens.server.endswith("AAAA") else "BBBB")
    with pytest.raises(exceptions.Unauthenticated) as unauthenticated:
        emulator.vehicles.get_vehicle(get, metadata=auth(bad_signature))
    status, body = rest(emulator, "GET", f"{PROVIDER}/vehicles/py-a", bad_signature)
    assert status == 401 and body["error"]["message"] == unauthenticated.value.message
    with pytest.raises(exceptions.Unauthenticated):
        emulator.vehicles.get_vehicle(get)
    with pytest.raises(exceptions.InvalidArgument):
        emulator.vehicles.create_vehicle(
            fe.CreateVehicleRequest(parent=PROVIDER, vehicle_id="bad/id", vehicle=new_vehicle()),
            metadata=auth(tokens.server))
    with pytest.raises(exceptions.InvalidArgument):
        emulator.vehicles.search_vehicles(search_request(pickup_radius_meters=5), metadata=auth(tokens.server))
    with pytest.raises(exceptions.NotFound):
        emulator.vehicles.get_vehicle(fe.GetVehicleRequest(name=f"{PROVIDER}/vehicles/nobody"),
                                      metadata=auth(tokens.server))
    with pytest.raises(exceptions.AlreadyExists):
        emulator.vehicles.create_vehicle(
            fe.CreateVehicleRequest(parent=PROVIDER, vehicle_id="py-a", vehicle=new_vehicle()),
            metadata=auth(tokens.server))
    # The refused update wrote nothing.
    after = emulator.vehicles.get_vehicle(fe.GetVehicleRequest(name=f"{PROVIDER}/vehicles/py-b"),
                                          metadata=auth(tokens.server))
    assert after.last_location.location.latitude == pytest.approx(37.41)


def test_what_grpc_writes_rest_reads_and_the_reverse(emulator, tokens, fleet):
    server = auth(tokens.server)
    emulator.vehicles.update_vehicle_attributes(
        fe.UpdateVehicleAttributesRequest(name=f"{PROVIDER}/vehicles/py-c",
                                          attributes=[fe.VehicleAttribute(key="ramp", bool_value=True)]),
        metadata=server)
    status, body = rest(emulator, "GET", f"{PROVIDER}/vehicles/py-c", tokens.server)
    assert status == 200
    assert {"key": "ramp", "value": "true", "boolValue": True} in body["attributes"]

    status, body = rest(emulator, "POST", f"{PROVIDER}/vehicles?vehicleId=py-rest", tokens.server,
                        {"vehicle_state": "ONLINE", "supported_trip_types": [2], "maximum_capacity": "3",
                         "vehicle_type": {"category": "AUTO"}})
    assert status == 200, body
    read = emulator.vehicles.get_vehicle(fe.GetVehicleRequest(name=f"{PROVIDER}/vehicles/py-rest"), metadata=server)
    assert read.maximum_capacity == 3 and read.vehicle_state == fe.VehicleState.ONLINE
    assert read.supported_trip_types == [fe.TripType.EXCLUSIVE]


VOLATILE = {"eta", "etaToFirstWaypoint", "remainingTimeToFirstWaypoint", "vehiclePickupEta", "vehicleDropoffEta",
            "pickupTime", "dropoffTime"}


def scrub(value):
    """The JSON without the members that depend on the moment of the call (estimated times)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def test_rest_answers_are_the_json_mapping_of_grpc_answers(emulator, tokens, fleet):
    """Parity, with protobuf's json_format as the independent referee."""
    server = auth(tokens.server)
    token = tokens.server
    pairs = [
        (emulator.vehicles.get_vehicle(fe.GetVehicleRequest(name=f"{PROVIDER}/vehicles/py-a"), metadata=server),
         rest(emulator, "GET", f"{PROVIDER}/vehicles/py-a", token)),
        (emulator.trips.get_trip(fe.GetTripRequest(name=f"{PROVIDER}/trips/py-t2"), metadata=server),
         rest(emulator, "GET", f"{PROVIDER}/trips/py-t2", token)),
        (emulator.vehicles.list_vehicles(
            fe.ListVehiclesRequest(parent=PROVIDER, vehicle_type_categories=[fe.Vehicle.VehicleType.Category.AUTO],
                                   page_size=2), metadata=server)._response,
         rest(emulator, "GET", f"{PROVIDER}/vehicles?vehicleTypeCategories=AUTO&pageSize=2", token)),
        (emulator.trips.search_trips(fe.SearchTripsRequest(parent=PROVIDER), metadata=server)._response,
         rest(emulator, "POST", f"{PROVIDER}/trips:search", token, {})),
        (emulator.vehicles.search_vehicles(search_request(), metadata=server),
         rest(emulator, "POST", f"{PROVIDER}/vehicles:search", token,
              as_json(search_request()))),
    ]
    for message, (status, body) in pairs:
        assert status == 200, body
        expected = as_json(message)
        # Estimates are computed at the time of each call; compare everything else exactly.
        assert scrub(body) == scrub(expected), type(message).__name__


def client_methods(service, classes=None):
    """Each RPC of the client's `service` as its wire path and its request and response message names, read from
    the client's transport (the paths it calls) and its methods' signatures (the messages). `classes`: the
    transport and client classes of a service of another of Google's clients."""
    transport_class, client_class = classes or {
        "VehicleService": (VehicleServiceGrpcTransport, fe.VehicleServiceClient),
        "TripService": (TripServiceGrpcTransport, fe.TripServiceClient),
    }[service]
    transport = transport_class(channel=grpc.insecure_channel("127.0.0.1:9"))  # never connected
    methods = {}
    for name, member in vars(transport_class).items():
        if not isinstance(member, property) or name in ("grpc_channel", "host", "kind"):
            continue
        path = getattr(transport, name)._method
        path = path.decode() if isinstance(path, bytes) else path
        signature = inspect.signature(getattr(client_class, name))
        request = next(a for a in typing.get_args(signature.parameters["request"].annotation)
                       if isinstance(a, type) and hasattr(a, "pb"))
        response = signature.return_annotation
        if response is None or response == "None":
            response_name = "google.protobuf.Empty"
        elif hasattr(response, "pb"):
            response_name = response.pb(response()).DESCRIPTOR.full_name
        else:  # a pager: the page message is the method's response
            response_name = f"{request.pb(request()).DESCRIPTOR.full_name[:-len('Request')]}Response"
        methods[path] = (request.pb(request()).DESCRIPTOR.full_name, response_name)
    transport.close()
    return methods


def test_proto_files_are_the_clients_wire_contract(tmp_path):
    """Our .proto files against the descriptors compiled into Google's client: every message, field (name,
    number, type, label, message or enum type, oneof), enum value and RPC path must be the same."""
    out = tmp_path / "ours.pb"
    protos = sorted(os.path.relpath(os.path.join(d, f), os.path.join(ROOT, "Protos"))
                    for d, _, files in os.walk(os.path.join(ROOT, "Protos")) for f in files if f.endswith(".proto"))
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "Protos"), "-I", "/usr/include", "--include_imports",
                    f"--descriptor_set_out={out}", *protos], check=True)
    ours = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.Default()

    def shape_of_message(descriptor):
        fields = {}
        for field in descriptor.fields:
            fields[field.name] = (field.number, field.type, field.is_repeated,
                                  (field.message_type or field.enum_type).full_name
                                  if (field.message_type or field.enum_type) else "",
                                  field.containing_oneof.name if field.containing_oneof
                                  and not field.containing_oneof.name.startswith("_") else "")
        return fields

    def shape_of_proto(message, prefix):
        fields = {}
        for field in message.field:
            oneof = ""
            if field.HasField("oneof_index") and not field.proto3_optional:
                oneof = message.oneof_decl[field.oneof_index].name
            repeated = field.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
            fields[field.name] = (field.number, field.type, repeated, field.type_name.lstrip("."), oneof)
        return fields

    checked = 0
    for file in ours.file:
        if not file.package == "maps.fleetengine.v1":
            continue

        def walk(messages, enums, prefix):
            nonlocal checked
            for enum in enums:
                theirs = pool.FindEnumTypeByName(f"{prefix}.{enum.name}")
                assert {v.name: v.number for v in enum.value} == {v.name: v.number for v in theirs.values}, enum.name
                checked += 1
            for message in messages:
                name = f"{prefix}.{message.name}"
                theirs = pool.FindMessageTypeByName(name)
                assert shape_of_proto(message, name) == shape_of_message(theirs), name
                checked += 1
                walk(message.nested_type, message.enum_type, name)

        walk(file.message_type, file.enum_type, file.package)
        for service in file.service:
            ours_methods = {f"/{file.package}.{service.name}/{m.name}": (m.input_type.lstrip("."), m.output_type.lstrip("."))
                            for m in service.method}
            assert ours_methods == client_methods(service.name), service.name
            checked += 1
    # Every message, enum and service the client knows in the package is one of ours.
    theirs = set()

    def collect(container):
        for message in container.message_types_by_name.values() if hasattr(container, "message_types_by_name") \
                else container.nested_types:
            theirs.add(message.full_name)
            collect(message)
        for enum in container.enum_types_by_name.values() if hasattr(container, "enum_types_by_name") \
                else container.enum_types:
            theirs.add(enum.full_name)

    for module in (fe.Vehicle, fe.Trip, fe.RequestHeader, fe.TrafficPolylineData, fe.SearchVehiclesRequest,
                   fe.SearchTripsRequest, fe.TerminalLocation):
        collect(module.pb(module()).DESCRIPTOR.file)
    mine = set()

    def names(messages, enums, prefix):
        for enum in enums:
            mine.add(f"{prefix}.{enum.name}")
        for message in messages:
            mine.add(f"{prefix}.{message.name}")
            names(message.nested_type, message.enum_type, f"{prefix}.{message.name}")

    for file in ours.file:
        if file.package == "maps.fleetengine.v1":
            names(file.message_type, file.enum_type, file.package)
    assert theirs - mine == set(), theirs - mine
    assert checked == len(mine) + 2
