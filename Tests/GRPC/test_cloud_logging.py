"""Google's Cloud Logging client (google-cloud-logging, over its REST transport) reads the emulator's request log.

The calls are made with Google's Fleet Engine client over gRPC and with plain REST; the Logging client, pointed at
the emulator with `client_options.api_endpoint`, lists, filters and pages their entries unchanged.
"""
import pytest
from google.api_core.client_options import ClientOptions
from google.api_core import exceptions
from google.cloud import logging as glogging
from google.maps import fleetengine_v1 as fe
from google.oauth2.credentials import Credentials

from test_google_client import PROVIDER, auth, new_vehicle, rest, tokens  # noqa: F401

PROJECT = PROVIDER.split("/")[1]


def logging_client(emulator, token):
    return glogging.Client(project=PROJECT, credentials=Credentials(token=token), _use_grpc=False,
                           client_options=ClientOptions(api_endpoint=emulator.rest))


@pytest.fixture(scope="module")
def calls(emulator, tokens):
    server = auth(tokens.server)
    emulator.vehicles.create_vehicle(
        fe.CreateVehicleRequest(parent=PROVIDER, vehicle_id="log-v1", vehicle=new_vehicle()), metadata=server)
    with pytest.raises(exceptions.PermissionDenied):
        emulator.vehicles.get_vehicle(
            fe.GetVehicleRequest(name=f"{PROVIDER}/vehicles/log-v1"), metadata=auth(tokens.driver("log-v2")))
    status, _ = rest(emulator, "GET", f"{PROVIDER}/vehicles/log-v1", tokens.server + "x")
    assert status == 401
    for index in range(3):
        rest(emulator, "GET", f"{PROVIDER}/vehicles/log-v1", tokens.server)


def test_lists_and_filters_entries(emulator, tokens, calls):
    client = logging_client(emulator, tokens.server)
    entries = list(client.list_entries(resource_names=[f"projects/{PROJECT}"],
                                       filter_='labels.vehicle_id="log-v1"'))
    names = [entry.log_name for entry in entries]
    assert names[0] == f"projects/{PROJECT}/logs/fleetengine.googleapis.com%2Fcreate_vehicle"
    assert names.count(f"projects/{PROJECT}/logs/fleetengine.googleapis.com%2Fget_vehicle") == 5
    assert all(entry.resource.type == "fleetengine.googleapis.com/Fleet" for entry in entries)
    assert entries[0].payload["@type"] == "type.googleapis.com/maps.fleetengine.v1.CreateVehicleLog"
    assert entries[0].payload["fleetauthTransport"] == "grpc"

    refused = list(client.list_entries(
        resource_names=[f"projects/{PROJECT}"],
        filter_='labels.vehicle_id="log-v1" AND jsonPayload.fleetauthDecision.outcome="REFUSED"'))
    checks = sorted(entry.payload["fleetauthDecision"]["check"] for entry in refused)
    assert checks == ["claims", "token"]
    assert all(entry.severity == "WARNING" for entry in refused)
    token = [entry for entry in refused if entry.payload["fleetauthDecision"]["check"] == "token"][0]
    assert token.payload["fleetauthDecision"]["reason"] == "invalid_base64url"
    assert token.payload["errorResponse"]["httpStatusCode"] == 401


def test_pages_newest_first(emulator, tokens, calls):
    client = logging_client(emulator, tokens.server)
    iterator = client.list_entries(resource_names=[f"projects/{PROJECT}"], filter_='labels.vehicle_id="log-v1"',
                                   order_by=glogging.DESCENDING, page_size=2)
    # Two entries a page: the client follows nextPageToken to the end by itself.
    times = [entry.timestamp for entry in iterator]
    assert len(times) == 6 and times == sorted(times, reverse=True)


def test_refuses_a_reader_without_fleet_access(emulator, tokens, calls):
    client = logging_client(emulator, tokens.driver("log-v1"))
    with pytest.raises(exceptions.Forbidden):
        list(client.list_entries(resource_names=[f"projects/{PROJECT}"]))
