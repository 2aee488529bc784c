"""Google's Cloud Logging client reads the request log of a `fleetauth demo` run, unchanged.

`fleetauth demo --keep` runs its apps and checks, prints how many entries the request log holds and an example
filter, then keeps its servers up and prints a console login. The test logs in with it, takes a server token from
the token server as a dispatcher backend would, and points `google-cloud-logging` (REST transport) at the emulator:
the client lists the demo's entries, applies the demo's own example filter, and pages through them.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

import pytest
import requests
from google.api_core.client_options import ClientOptions
from google.cloud import logging as glogging
from google.oauth2.credentials import Credentials

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FLEETAUTH_BIN", os.path.join(ROOT, ".build", "debug", "fleetauth"))
PROJECT = "demo-project"


def post(url, body, token=None):
    request = urllib.request.Request(url, method="POST", data=json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def get(url, token):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


class PageRecorder(requests.Session):
    """The logging client's HTTP session, with the server token, noting how many entries each page held."""

    def __init__(self, token):
        super().__init__()
        self.headers["Authorization"] = f"Bearer {token}"
        self.page_sizes = []

    def request(self, method, url, **kwargs):
        answer = super().request(method, url, **kwargs)
        if "/v2/entries:list" in url:
            self.page_sizes.append(len(answer.json().get("entries", [])))
        return answer


@pytest.fixture(scope="module")
def demo():
    with tempfile.TemporaryDirectory() as directory:
        log_path = os.path.join(directory, "demo.log")
        process = subprocess.Popen(
            [BIN, "demo", "--keep", "--duration", "5", "--drivers", "2", "--consumers", "2",
             "--delivery-drivers", "1", "--shipments", "2"],
            stdout=open(log_path, "w"), stderr=subprocess.STDOUT)

        def kept():
            text = open(log_path).read()
            assert process.poll() is None, text
            return text if re.search(r"Fleet console:.*\(console / \S+\)", text) else None

        try:
            text = wait_until(kept, "fleetauth demo --keep printing the console's login")
            yield text
        finally:
            process.terminate()
            process.wait(timeout=60)


def test_the_logging_client_lists_filters_and_pages_the_demos_entries(demo):
    token_server = re.search(r"Token server:\s+(\S+)", demo).group(1)
    emulator = re.search(r"Fleet Engine emulator:\s+(\S+)", demo).group(1)
    written = int(re.search(r"Request log: (\d+) entries", demo).group(1))
    example = re.search(r"fleetauth logs --emulator \S+ --token SERVER_TOKEN '(.+)'", demo).group(1)
    password = re.search(r"\(console / (\S+)\)", demo).group(1)
    session = post(f"{token_server}/v1/sessions", {"username": "console", "password": password})["sessionToken"]
    server_token = get(f"{token_server}/token/server", session)["token"]
    client = glogging.Client(project=PROJECT, credentials=Credentials(token=server_token), _use_grpc=False,
                             client_options=ClientOptions(api_endpoint=emulator))
    assert written > 0

    # Every entry the demo counted is there (the kept fleet goes on adding more), each in Fleet Engine's shape.
    everything = list(client.list_entries(resource_names=[f"projects/{PROJECT}"], page_size=1000))
    assert len(everything) >= written
    assert len({entry.insert_id for entry in everything}) == len(everything)
    assert {entry.resource.type for entry in everything} == {
        "fleetengine.googleapis.com/Fleet", "fleetengine.googleapis.com/DeliveryFleet"}
    names = {entry.log_name.rsplit("%2F", 1)[1] for entry in everything}
    assert {"create_vehicle", "update_vehicle", "create_trip", "get_trip", "update_delivery_vehicle"} <= names
    assert all(entry.payload["fleetauthDecision"]["outcome"] in ("ALLOWED", "REFUSED") for entry in everything)

    # The example filter the demo printed works as printed: the first driver's calls that were refused, which are
    # the demo's forged-signature check (the call and its one retry with a fresh token, both 401).
    refused = list(client.list_entries(resource_names=[f"projects/{PROJECT}"], filter_=example))
    vehicle = re.search(r'labels\.vehicle_id="([^"]+)"', example).group(1)
    assert [entry.payload["fleetauthDecision"]["reason"] for entry in refused] == ["invalid_signature"] * 2
    assert all(entry.labels["vehicle_id"] == vehicle for entry in refused)
    assert all(entry.severity == "WARNING" for entry in refused)
    assert all(entry.payload["errorResponse"]["httpStatusCode"] == 401 for entry in refused)
    expected = [entry.insert_id for entry in everything
                if (entry.labels or {}).get("vehicle_id") == vehicle and entry.severity in ("WARNING", "ERROR")]
    assert [entry.insert_id for entry in refused] == expected

    # One vehicle's calls, newest first, seven a page: the client follows nextPageToken to the end by itself.
    session = PageRecorder(server_token)
    paging = glogging.Client(project=PROJECT, _http=session, _use_grpc=False,
                             client_options=ClientOptions(api_endpoint=emulator))
    filter_ = f'labels.vehicle_id="{vehicle}" AND logName:"update_vehicle"'
    ids = [entry.insert_id for entry in paging.list_entries(
        resource_names=[f"projects/{PROJECT}"], filter_=filter_, order_by=glogging.DESCENDING, page_size=7)]
    sizes = session.page_sizes
    oldest_first = [entry.insert_id for entry in everything if (entry.labels or {}).get("vehicle_id") == vehicle
                    and entry.log_name.endswith("%2Fupdate_vehicle")]
    assert len(sizes) > 1 and all(size == 7 for size in sizes[:-1])
    # The kept fleet's rounds name their vehicles afresh, so this vehicle's entries are the same in both reads.
    assert ids == oldest_first[::-1]
