"""Google's official Deliveries client (google-maps-fleetengine-delivery) against the emulator, unchanged, over both
of its transports: gRPC (grpcio, an insecure channel) and REST (its own HTTP transport pointed at the emulator's
REST port). The token travels as call metadata, which the REST transport sends as the Authorization header.

Checks every RPC of maps.fleetengine.delivery.v1.DeliveryService, the exception type of each documented failure,
REST answers equal to gRPC answers of the same state, and our .proto files against the client's descriptors.
"""
import contextlib
import os
import subprocess

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.maps import fleetengine_delivery_v1 as fd
from google.maps.fleetengine_delivery_v1.services.delivery_service.transports import (
    DeliveryServiceGrpcTransport, DeliveryServiceRestTransport)
from google.protobuf import descriptor_pb2, descriptor_pool, json_format

from test_google_client import ROOT, client_methods

PROVIDER = "providers/demo-project"


class TokenInMetadata(AnonymousCredentials):
    """No credentials of Google's: the Fleet Engine token travels in each call's metadata. A 401 makes the REST
    transport's session refresh its credentials and retry once; there is nothing to refresh."""

    def refresh(self, request):
        pass


@pytest.fixture(scope="module")
def clients(emulator):
    """The client twice: over gRPC and over REST."""
    return {
        "grpc": fd.DeliveryServiceClient(transport=DeliveryServiceGrpcTransport(channel=emulator.channel)),
        "rest": fd.DeliveryServiceClient(transport=DeliveryServiceRestTransport(
            host=emulator.rest, credentials=TokenInMetadata(), url_scheme="http")),
    }


class Tokens:
    def __init__(self, emulator):
        self.emulator = emulator
        self.server = emulator.token("delivery-super-user", "--type", "delivery_server")
        self.reader = emulator.token("delivery-fleet-reader", "--type", "delivery_fleet_reader")

    def trusted(self, vehicle):
        return self.emulator.token("delivery-trusted-driver", "--type", "trusted_delivery_driver",
                                   "--delivery-vehicle", vehicle)

    def untrusted(self, vehicle):
        return self.emulator.token("delivery-untrusted-driver", "--type", "untrusted_delivery_driver",
                                   "--delivery-vehicle", vehicle)

    def consumer(self, tracking):
        return self.emulator.token("delivery-consumer", "--type", "delivery_consumer", "--tracking", tracking)


@pytest.fixture(scope="module")
def tokens(emulator):
    return Tokens(emulator)


def auth(token):
    return [("authorization", f"Bearer {token}")]


def task(type_, tracking=None, lat=51.5, lng=-0.12, **extra):
    return fd.Task(type_=type_, state=fd.Task.State.OPEN, tracking_id=tracking or "",
                   planned_location={"point": {"latitude": lat, "longitude": lng}},
                   task_duration={"seconds": 120}, **extra)


def stops(*groups):
    return [fd.VehicleJourneySegment(stop=fd.VehicleStop(
        planned_location={"point": {"latitude": 51.5 + i / 100, "longitude": -0.12}},
        tasks=[fd.VehicleStop.TaskInfo(task_id=t) for t in group], state=fd.VehicleStop.State.NEW))
        for i, group in enumerate(groups)]


@pytest.mark.parametrize("transport", ["grpc", "rest"])
def test_every_rpc(clients, tokens, transport):
    """A delivery day through all twelve RPCs, over one transport."""
    client = clients[transport]
    v, p = f"van-{transport}", f"parcel-{transport}"
    server = auth(tokens.server)
    vehicle = client.create_delivery_vehicle(fd.CreateDeliveryVehicleRequest(
        parent=PROVIDER, delivery_vehicle_id=v,
        delivery_vehicle=fd.DeliveryVehicle(type_=fd.DeliveryVehicle.DeliveryVehicleType.AUTO,
                                            last_location={"location": {"latitude": 51.49, "longitude": -0.12}},
                                            attributes=[{"key": "depot", "value": "west"}])),
        metadata=auth(tokens.trusted(v)))
    assert vehicle.name == f"{PROVIDER}/deliveryVehicles/{v}"
    assert vehicle.attributes[0].string_value == "west"

    batch = client.batch_create_tasks(fd.BatchCreateTasksRequest(parent=PROVIDER, requests=[
        fd.CreateTaskRequest(task_id=f"{transport}-pickup", task=task(fd.Task.Type.PICKUP, p)),
        fd.CreateTaskRequest(task_id=f"{transport}-drop", task=task(fd.Task.Type.DELIVERY, p, lat=51.51)),
    ]), metadata=server)
    assert [t.name for t in batch.tasks] == [f"{PROVIDER}/tasks/{transport}-pickup", f"{PROVIDER}/tasks/{transport}-drop"]
    lunch = client.create_task(fd.CreateTaskRequest(
        parent=PROVIDER, task_id=f"{transport}-lunch", task=task(fd.Task.Type.UNAVAILABLE)), metadata=server)
    assert lunch.state == fd.Task.State.OPEN

    updated = client.update_delivery_vehicle(fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{PROVIDER}/deliveryVehicles/{v}",
                                            remaining_vehicle_journey_segments=stops(
                                                [f"{transport}-pickup"], [f"{transport}-drop"])),
        update_mask={"paths": ["remaining_vehicle_journey_segments"]}), metadata=auth(tokens.trusted(v)))
    assert len(updated.remaining_vehicle_journey_segments) == 2
    # Output only, computed by the emulator as Fleet Engine fills them: each stop's task durations, each segment's
    # driving distance (about 1.1 km per 0.01 degree of latitude here).
    first = updated.remaining_vehicle_journey_segments[0]
    assert first.stop.tasks[0].task_duration.total_seconds() == 120
    assert 1000 < first.driving_distance_meters < 1300
    moved = client.update_delivery_vehicle(fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{PROVIDER}/deliveryVehicles/{v}",
                                            last_location={"location": {"latitude": 51.495, "longitude": -0.12}}),
        update_mask={"paths": ["last_location"]}), metadata=auth(tokens.untrusted(v)))
    assert moved.last_location.location.latitude == pytest.approx(51.495)

    got = client.get_delivery_vehicle(fd.GetDeliveryVehicleRequest(name=f"{PROVIDER}/deliveryVehicles/{v}"),
                                      metadata=auth(tokens.untrusted(v)))
    assert got == moved
    drop = client.get_task(fd.GetTaskRequest(name=f"{PROVIDER}/tasks/{transport}-drop"), metadata=server)
    assert drop.delivery_vehicle_id == v
    assert len(drop.journey_sharing_info.remaining_vehicle_journey_segments) == 2
    # GetTask shares segments, never their stops (their locations, tasks and states are left out of its answer).
    for segment in drop.journey_sharing_info.remaining_vehicle_journey_segments:
        assert not fd.VehicleJourneySegment.pb(segment).HasField("stop")
        assert segment.driving_distance_meters > 0

    listed = client.list_delivery_vehicles(fd.ListDeliveryVehiclesRequest(
        parent=PROVIDER, filter='attributes.depot = "west"'), metadata=auth(tokens.reader))
    assert v in [x.name.split("/")[-1] for x in listed]
    # Listed vehicles carry no journey segments.
    assert all(len(x.remaining_vehicle_journey_segments) == 0 for x in listed)
    tasks = client.list_tasks(fd.ListTasksRequest(
        parent=PROVIDER, filter=f'delivery_vehicle_id = "{v}" AND type = DELIVERY'), metadata=auth(tokens.reader))
    assert [t.name.split("/")[-1] for t in tasks] == [f"{transport}-drop"]

    info = client.get_task_tracking_info(fd.GetTaskTrackingInfoRequest(
        name=f"{PROVIDER}/taskTrackingInfo/{p}"), metadata=auth(tokens.consumer(p)))
    assert info.tracking_id == p and info.state == fd.Task.State.OPEN
    assert info.remaining_stop_count == 1
    assert info.vehicle_location.location.latitude == pytest.approx(51.495)

    # The pickup done: its stop removed closes it; the outcome is set on the task.
    client.update_delivery_vehicle(fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{PROVIDER}/deliveryVehicles/{v}",
                                            remaining_vehicle_journey_segments=stops([f"{transport}-drop"])),
        update_mask={"paths": ["remaining_vehicle_journey_segments"]}), metadata=auth(tokens.trusted(v)))
    done = client.update_task(fd.UpdateTaskRequest(
        task=fd.Task(name=f"{PROVIDER}/tasks/{transport}-pickup", task_outcome=fd.Task.TaskOutcome.SUCCEEDED),
        update_mask={"paths": ["task_outcome"]}), metadata=server)
    assert done.state == fd.Task.State.CLOSED and done.task_outcome == fd.Task.TaskOutcome.SUCCEEDED

    client.delete_task(fd.DeleteTaskRequest(name=f"{PROVIDER}/tasks/{transport}-lunch"), metadata=server)
    client.update_delivery_vehicle(fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{PROVIDER}/deliveryVehicles/{v}"),
        update_mask={"paths": ["remaining_vehicle_journey_segments"]}), metadata=server)
    client.delete_delivery_vehicle(fd.DeleteDeliveryVehicleRequest(name=f"{PROVIDER}/deliveryVehicles/{v}"),
                                   metadata=server)
    with pytest.raises(exceptions.NotFound):
        client.get_delivery_vehicle(fd.GetDeliveryVehicleRequest(name=f"{PROVIDER}/deliveryVehicles/{v}"),
                                    metadata=server)


# The exception each failure raises: over gRPC the status code's own class; over REST api_core chooses by the HTTP
# status, whose class is the gRPC class's base (ALREADY_EXISTS is 409 Conflict, FAILED_PRECONDITION and
# INVALID_ARGUMENT are 400 BadRequest, UNAUTHENTICATED is 401 Unauthorized).
FAILURES = {
    "already_exists": (exceptions.AlreadyExists, exceptions.Conflict),
    "permission_denied": (exceptions.PermissionDenied, exceptions.Forbidden),
    "invalid_argument": (exceptions.InvalidArgument, exceptions.BadRequest),
    "not_found": (exceptions.NotFound, exceptions.NotFound),
    "failed_precondition": (exceptions.FailedPrecondition, exceptions.BadRequest),
    "unauthenticated": (exceptions.Unauthenticated, exceptions.Unauthorized),
}


@pytest.mark.parametrize("transport", ["grpc", "rest"])
def test_errors_are_the_documented_exceptions(clients, tokens, transport):
    client = clients[transport]

    @contextlib.contextmanager
    def raises(failure):
        grpc_class, http_class = FAILURES[failure]
        expected = grpc_class if transport == "grpc" else http_class
        with pytest.raises(expected) as info:
            yield
        assert type(info.value) is expected, type(info.value)
        if transport == "rest":  # the body's status names the gRPC code
            assert info.value.response.json()["error"]["status"] == failure.upper()

    server = auth(tokens.server)
    v = f"err-van-{transport}"
    client.create_delivery_vehicle(fd.CreateDeliveryVehicleRequest(
        parent=PROVIDER, delivery_vehicle_id=v, delivery_vehicle=fd.DeliveryVehicle()), metadata=server)
    with raises("already_exists"):
        client.create_delivery_vehicle(fd.CreateDeliveryVehicleRequest(
            parent=PROVIDER, delivery_vehicle_id=v, delivery_vehicle=fd.DeliveryVehicle()), metadata=server)
    with raises("permission_denied"):
        client.get_delivery_vehicle(fd.GetDeliveryVehicleRequest(name=f"{PROVIDER}/deliveryVehicles/{v}"),
                                    metadata=auth(tokens.untrusted("someone-else")))
    with raises("invalid_argument"):
        client.create_task(fd.CreateTaskRequest(parent=PROVIDER, task_id=f"err-{transport}",
                                                task=task(fd.Task.Type.DELIVERY)), metadata=server)
    with raises("invalid_argument"):
        client.list_tasks(fd.ListTasksRequest(parent=PROVIDER, filter="state = = OPEN"), metadata=server)
    with raises("not_found"):
        client.get_task(fd.GetTaskRequest(name=f"{PROVIDER}/tasks/none-{transport}"), metadata=server)
    client.create_task(fd.CreateTaskRequest(parent=PROVIDER, task_id=f"err-t-{transport}",
                                            task=task(fd.Task.Type.DELIVERY, "err-p")), metadata=server)
    client.update_delivery_vehicle(fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{PROVIDER}/deliveryVehicles/{v}",
                                            remaining_vehicle_journey_segments=stops([f"err-t-{transport}"])),
        update_mask={"paths": ["remaining_vehicle_journey_segments"]}), metadata=server)
    with raises("failed_precondition"):
        client.delete_delivery_vehicle(fd.DeleteDeliveryVehicleRequest(name=f"{PROVIDER}/deliveryVehicles/{v}"),
                                       metadata=server)
    with raises("failed_precondition"):
        client.delete_task(fd.DeleteTaskRequest(name=f"{PROVIDER}/tasks/err-t-{transport}"), metadata=server)
    with raises("unauthenticated"):
        client.get_task(fd.GetTaskRequest(name=f"{PROVIDER}/tasks/err-t-{transport}"), metadata=auth("not-a-jwt"))


def test_rest_answers_equal_grpc_answers(clients, tokens):
    server = auth(tokens.server)
    grpc_client, rest_client = clients["grpc"], clients["rest"]
    grpc_client.create_delivery_vehicle(fd.CreateDeliveryVehicleRequest(
        parent=PROVIDER, delivery_vehicle_id="same-van", delivery_vehicle=fd.DeliveryVehicle(
            last_location={"location": {"latitude": 51.0, "longitude": 0.5}})), metadata=server)
    rest_client.create_task(fd.CreateTaskRequest(parent=PROVIDER, task_id="same-task", task=task(
        fd.Task.Type.PICKUP, "same-parcel", attributes=[{"key": "size", "number_value": 3}])), metadata=server)
    grpc_client.update_delivery_vehicle(fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{PROVIDER}/deliveryVehicles/same-van",
                                            remaining_vehicle_journey_segments=stops(["same-task"])),
        update_mask={"paths": ["remaining_vehicle_journey_segments"]}), metadata=server)
    for call, request in [
        ("get_delivery_vehicle", fd.GetDeliveryVehicleRequest(name=f"{PROVIDER}/deliveryVehicles/same-van")),
        ("get_task", fd.GetTaskRequest(name=f"{PROVIDER}/tasks/same-task")),
        ("list_tasks", fd.ListTasksRequest(parent=PROVIDER, filter='tracking_id = "same-parcel"')),
    ]:
        a = getattr(grpc_client, call)(request, metadata=server)
        b = getattr(rest_client, call)(request, metadata=server)
        if call == "list_tasks":
            a, b = a._response, b._response
        assert json_format.MessageToDict(type(a).pb(a)) == json_format.MessageToDict(type(b).pb(b)), call


def test_proto_files_are_the_clients_wire_contract(tmp_path):
    """Our delivery .proto files against the descriptors compiled into Google's client: every message, field (name,
    number, type, label, message or enum type, oneof), enum value and RPC."""
    out = tmp_path / "ours.pb"
    protos = sorted(os.path.relpath(os.path.join(d, f), os.path.join(ROOT, "Protos"))
                    for d, _, files in os.walk(os.path.join(ROOT, "Protos")) for f in files if f.endswith(".proto"))
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "Protos"), "-I", "/usr/include", "--include_imports",
                    f"--descriptor_set_out={out}", *protos], check=True)
    ours = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.Default()
    fd.Task.pb(fd.Task())  # loads the client's descriptors into the default pool

    def theirs_shape(descriptor):
        # proto-plus names fields that are Python keywords with a trailing underscore (type_): the wire name is
        # the JSON name's snake case.
        return {(f.name[:-1] if f.name.endswith("_") else f.name): (
            f.number, f.type, f.is_repeated,
            (f.message_type or f.enum_type).full_name if (f.message_type or f.enum_type) else "",
            f.containing_oneof.name if f.containing_oneof and not f.containing_oneof.name.startswith("_") else "")
            for f in descriptor.fields}

    def our_shape(message):
        return {f.name: (f.number, f.type, f.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
                         f.type_name.lstrip("."),
                         message.oneof_decl[f.oneof_index].name
                         if f.HasField("oneof_index") and not f.proto3_optional else "")
                for f in message.field}

    checked = 0

    def walk(messages, enums, prefix):
        nonlocal checked
        for enum in enums:
            theirs = pool.FindEnumTypeByName(f"{prefix}.{enum.name}")
            assert {v.name: v.number for v in enum.value} == {v.name: v.number for v in theirs.values}, enum.name
            checked += 1
        for message in messages:
            name = f"{prefix}.{message.name}"
            assert our_shape(message) == theirs_shape(pool.FindMessageTypeByName(name)), name
            checked += 1
            walk(message.nested_type, message.enum_type, name)

    for file in ours.file:
        if file.package != "maps.fleetengine.delivery.v1":
            continue
        walk(file.message_type, file.enum_type, file.package)
        for service in file.service:
            ours_methods = {f"/{file.package}.{service.name}/{m.name}": (m.input_type.lstrip("."),
                                                                         m.output_type.lstrip("."))
                            for m in service.method}
            assert ours_methods == client_methods(
                service.name, (DeliveryServiceGrpcTransport, fd.DeliveryServiceClient)), service.name
            assert len(ours_methods) == 12
            checked += 1
    assert checked > 20
