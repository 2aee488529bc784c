"""gRPC's standard operator tools against the emulator's gRPC port: grpcio-health-checking's stubs (what
grpc_health_probe and Kubernetes' gRPC probes call) and grpcio-reflection's client (what grpcurl and Postman use to
list services and read their descriptors without the .proto files).
"""
import os
import signal
import tempfile
import time

import grpc
import pytest
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2 as alpha_pb2
from grpc_reflection.v1alpha import reflection_pb2_grpc as alpha_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from test_google_client import Emulator

SERVICES = [
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
    "maps.fleetengine.delivery.v1.DeliveryService",
    "maps.fleetengine.v1.TripService",
    "maps.fleetengine.v1.VehicleService",
]


@pytest.fixture()
def emulator():
    with tempfile.TemporaryDirectory() as directory:
        instance = Emulator(directory)
        try:
            yield instance
        finally:
            if instance.process.poll() is None:
                instance.stop()


def test_check_server_and_each_service(emulator):
    health = health_pb2_grpc.HealthStub(emulator.channel)
    for service in [""] + SERVICES:
        answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING, service
    with pytest.raises(grpc.RpcError) as failure:
        health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
    assert failure.value.code() == grpc.StatusCode.NOT_FOUND


def test_watch_unknown_then_serving_then_not_serving_on_sigterm(emulator):
    health = health_pb2_grpc.HealthStub(emulator.channel)
    unknown = health.Watch(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
    assert next(unknown).status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
    unknown.cancel()
    stream = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=30)
    assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
    # A server shutting down tells its watchers before it goes.
    emulator.process.send_signal(signal.SIGTERM)
    assert next(stream).status == health_pb2.HealthCheckResponse.NOT_SERVING
    assert emulator.process.wait(timeout=30) == 0


def test_reflection_lists_services_and_serves_descriptors(emulator):
    database = ProtoReflectionDescriptorDatabase(emulator.channel)
    assert sorted(database.get_services()) == SERVICES
    pool = descriptor_pool.DescriptorPool(database)
    vehicles = pool.FindServiceByName("maps.fleetengine.v1.VehicleService")
    assert "UpdateVehicle" in [method.name for method in vehicles.methods]
    update = vehicles.FindMethodByName("UpdateVehicle")
    assert update.input_type.full_name == "maps.fleetengine.v1.UpdateVehicleRequest"
    # Imports come along: the vehicle message refers to the well-known and Google types.
    vehicle = pool.FindMessageTypeByName("maps.fleetengine.v1.Vehicle")
    assert vehicle.fields_by_name["last_location"].message_type.full_name == "maps.fleetengine.v1.VehicleLocation"
    assert pool.FindMessageTypeByName("google.protobuf.Timestamp").full_name == "google.protobuf.Timestamp"
    trip = pool.FindFileContainingSymbol("maps.fleetengine.v1.TripStatus")
    assert trip.name == "google/maps/fleetengine/v1/trips.proto"


def test_reflection_errors_are_answers_not_failures(emulator):
    stub = alpha_pb2_grpc.ServerReflectionStub(emulator.channel)
    questions = [
        alpha_pb2.ServerReflectionRequest(file_containing_symbol="no.such.Symbol"),
        alpha_pb2.ServerReflectionRequest(file_by_filename="google/protobuf/empty.proto"),
        alpha_pb2.ServerReflectionRequest(file_by_filename="missing.proto"),
    ]
    answers = list(stub.ServerReflectionInfo(iter(questions), timeout=10))
    assert len(answers) == 3
    assert answers[0].error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert len(answers[1].file_descriptor_response.file_descriptor_proto) == 1
    assert answers[2].error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


def test_reflection_v1_answers_like_v1alpha(emulator):
    # grpc.reflection.v1's messages are v1alpha's on the wire: call the v1 method with them.
    v1 = emulator.channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=alpha_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=alpha_pb2.ServerReflectionResponse.FromString,
    )
    question = alpha_pb2.ServerReflectionRequest(list_services="*")
    answers = list(v1(iter([question]), timeout=10))
    assert sorted(service.name for service in answers[0].list_services_response.service) == SERVICES
    assert answers[0].original_request == question
