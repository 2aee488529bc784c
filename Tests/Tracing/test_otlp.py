"""One call through the chain is one trace: an app (this test, with a W3C traceparent as FleetAuthClient sends it)
gets a token from the token server and calls the emulator with it over REST and gRPC. Both servers export their
spans over OTLP/HTTP to a real receiver here, which decodes them with the OpenTelemetry protos
(opentelemetry-proto), and every span belongs to the app's trace: the servers' request spans are children of the
app's span, the steps (verify, mint and sign, audit write) children of those. Their JSON log lines carry the trace.
"""
import http.server
import json
import os
import sys
import re
import subprocess
import tempfile
import threading
import time
import urllib.request

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FLEETAUTH_BIN", os.path.join(ROOT, ".build", "debug", "fleetauth"))
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
APP_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{APP_SPAN}-01"


class Receiver(http.server.ThreadingHTTPServer):
    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.spans = []  # (service name, span)
        self.lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
            self.send_response(404)
            self.end_headers()
            return
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        with self.server.lock:
            for resource_spans in request.resource_spans:
                service = next(a.value.string_value for a in resource_spans.resource.attributes
                               if a.key == "service.name")
                for scope in resource_spans.scope_spans:
                    self.server.spans.extend((service, span) for span in scope.spans)
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def start(arguments, directory, markers, environment, name):
    log = open(os.path.join(directory, f"{name}.log"), "w+")
    errors = open(os.path.join(directory, f"{name}.err"), "w+")
    process = subprocess.Popen([BIN, *arguments], cwd=directory, stdout=log, stderr=errors,
                               env={**os.environ, **environment})
    def listening():
        text = open(log.name).read()
        found = [re.search(marker, text) for marker in markers]
        if all(found):
            return text, found
        if process.poll() is not None:
            raise AssertionError(text + open(errors.name).read())
        return None
    try:
        text, found = wait_until(listening, f"{name} printing {markers}")
    except AssertionError:
        process.terminate()
        raise
    return process, [m.group(1) for m in found], text, errors.name


def test_one_call_is_one_trace():
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    environment = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_address[1]}",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    with tempfile.TemporaryDirectory() as directory:
        tokens, (token_port,), text, token_errors = start(
            ["token-server", "--port", "0", "--bcrypt-cost", "10", "--log-format", "json"], directory,
            [r"Token server listening on http://127\.0\.0\.1:(\d+)"], environment, "token-server")
        password = re.search(r"with password (\S+) \(shown once\)", text).group(1)
        emulator, (rest, grpc_port), _, emulator_errors = start(
            ["emulator", "--in-memory", "--port", "0", "--grpc-port", "0", "--log-format", "json",
             "--trust", "fleetauth-data/emulator-trust.json"], directory,
            [r"listening on http://127\.0\.0\.1:(\d+)", r"gRPC listening on 127\.0\.0\.1:(\d+)"], environment,
            "emulator")
        try:
            def call(url, method="GET", body=None, bearer=None):
                headers = {"traceparent": TRACEPARENT, "Content-Type": "application/json"}
                if bearer:
                    headers["Authorization"] = f"Bearer {bearer}"
                data = json.dumps(body).encode() if body is not None else None
                request = urllib.request.Request(url, data=data, method=method, headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=30) as answer:
                        return answer.status, json.loads(answer.read() or b"{}")
                except urllib.error.HTTPError as error:
                    return error.code, json.loads(error.read() or b"{}")

            base = f"http://127.0.0.1:{token_port}"
            status, session = call(base + "/v1/sessions", "POST", {"username": "operator", "password": password})
            assert status == 201, session
            status, token = call(base + "/token/fleet_reader", bearer=session["sessionToken"])
            assert status == 200, token
            status, listed = call(f"http://127.0.0.1:{rest}/v1/providers/demo-project/vehicles?vehicleTypeCategories=AUTO",
                                  bearer=token["token"])
            assert status == 200, listed
            channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
            health = health_pb2_grpc.HealthStub(channel)
            health.Check(health_pb2.HealthCheckRequest(), metadata=[("traceparent", TRACEPARENT)], timeout=10)

            def exported():
                with receiver.lock:
                    names = {(service, span.name) for service, span in receiver.spans}
                return {("fleetauth-token-server", "mint and sign"), ("fleetauth-emulator", "verify token"),
                        ("fleetauth-emulator", "grpc.health.v1.Health/Check")} <= names
            wait_until(exported, "the servers exporting the minting, verification and health-check spans")
            with receiver.lock:
                spans = list(receiver.spans)
        finally:
            for process in (emulator, tokens):
                process.terminate()
                process.wait(timeout=30)
            receiver.shutdown()
        emulator_log = open(emulator_errors).read()
        token_log = open(token_errors).read()

    by_id = {span.span_id.hex(): (service, span) for service, span in spans}
    ours = [(service, span) for service, span in spans if span.trace_id.hex() == TRACE_ID]
    services = {service for service, _ in ours}
    assert services == {"fleetauth-token-server", "fleetauth-emulator"}, [(s, x.name) for s, x in spans]
    # The servers' request spans are children of the app's span; every other span descends from one of them.
    roots = [(service, span) for service, span in ours if span.parent_span_id.hex() == APP_SPAN]
    assert {service for service, _ in roots} == services
    assert all(span.kind == span.SPAN_KIND_SERVER for _, span in roots)
    for service, span in ours:
        if span.parent_span_id.hex() != APP_SPAN:
            parent_service, parent = by_id[span.parent_span_id.hex()]
            assert parent_service == service and parent.trace_id == span.trace_id, span.name
    names = {(service, span.name) for service, span in ours}
    assert ("fleetauth-token-server", "mint and sign") in names
    assert ("fleetauth-token-server", "audit write") in names
    assert ("fleetauth-emulator", "verify token") in names
    assert ("fleetauth-emulator", "grpc.health.v1.Health/Check") in names
    # Log lines written during a request carry its trace, in Cloud Logging's field: the audit line of the token.
    lines = [json.loads(line) for line in (emulator_log + token_log).splitlines()]
    issued = [line for line in lines if line["message"] == "issued token"]
    assert len(issued) == 1, token_log
    assert issued[0]["logging.googleapis.com/trace"] == TRACE_ID
    assert issued[0]["severity"] == "INFO"
