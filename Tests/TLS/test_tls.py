"""Both servers over TLS, as an operator runs them: `curl --cacert` over HTTPS with HTTP/2 and HTTP/1.1, Python
grpcio with the test CA on the emulator's gRPC port, and a certificate swapped (files replaced, then SIGHUP) while a
client keeps its connection: the open connection goes on, a new one gets the new certificate.

The CA and certificates are made here with `cryptography`; the servers are the built `fleetauth`
($FLEETAUTH_BIN, default .build/debug/fleetauth).
"""
import datetime
import http.client
import ipaddress
import os
import sys
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FLEETAUTH_BIN", os.path.join(ROOT, ".build", "debug", "fleetauth"))


def make_ca():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "FleetAuth test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def make_leaf(ca_key, ca_cert, directory, name):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_path, key_path = os.path.join(directory, f"{name}.pem"), os.path.join(directory, f"{name}.key")
    with open(cert_path, "wb") as f:
        # The chain: leaf, then the CA (a chain is allowed).
        f.write(cert.public_bytes(serialization.Encoding.PEM) + ca_cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert.public_bytes(serialization.Encoding.DER), cert_path, key_path


class Server:
    def __init__(self, directory, arguments, markers):
        self.log = open(os.path.join(directory, "server.log"), "w+")
        self.process = subprocess.Popen([BIN, *arguments], cwd=directory, stdout=self.log, stderr=subprocess.STDOUT)
        def listening():
            with open(self.log.name) as f:
                text = f.read()
            found = [re.search(marker, text) for marker in markers]
            if self.process.poll() is not None and not all(found):
                raise AssertionError(f"the server stopped:\n{text}")
            return found if all(found) else None
        try:
            found = wait_until(listening, f"{arguments[0]} printing {markers}")
        except AssertionError:
            self.stop()
            raise
        self.ports = [int(match.group(1)) for match in found]

    def logged(self, text):
        with open(self.log.name) as f:
            return text in f.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture()
def pki():
    with tempfile.TemporaryDirectory() as directory:
        ca_key, ca_cert = make_ca()
        ca_path = os.path.join(directory, "ca.pem")
        with open(ca_path, "wb") as f:
            f.write(ca_cert.public_bytes(serialization.Encoding.PEM))
        first = make_leaf(ca_key, ca_cert, directory, "first")
        second = make_leaf(ca_key, ca_cert, directory, "second")
        shutil.copy(first[1], os.path.join(directory, "server.pem"))
        shutil.copy(first[2], os.path.join(directory, "server.key"))
        yield directory, ca_path, first, second


def tls_arguments(directory):
    return ["--tls-certificate", os.path.join(directory, "server.pem"), "--tls-key", os.path.join(directory, "server.key")]


def peer_certificate(port, ca_path, alpn):
    context = ssl.create_default_context(cafile=ca_path)
    context.set_alpn_protocols(alpn)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.getpeercert(binary_form=True), tls.selected_alpn_protocol()


def curl(ca_path, url, *flags):
    result = subprocess.run(["curl", "-sS", "--cacert", ca_path, *flags, "-w", "\n%{http_version}", url],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    body, version = result.stdout.rsplit("\n", 1)
    return body, version


def test_emulator_https_http2_and_grpc_over_tls(pki):
    directory, ca_path, first, _ = pki
    server = Server(directory, ["emulator", "--in-memory", "--port", "0", "--grpc-port", "0", *tls_arguments(directory)],
                    [r"listening on https://127\.0\.0\.1:(\d+)", r"gRPC listening on 127\.0\.0\.1:(\d+) \(TLS\)"])
    try:
        rest, grpc_port = server.ports
        assert curl(ca_path, f"https://localhost:{rest}/healthz") == ('{"status":"ok"}', "2")
        assert curl(ca_path, f"https://localhost:{rest}/healthz", "--http1.1") == ('{"status":"ok"}', "1.1")
        assert peer_certificate(rest, ca_path, ["h2", "http/1.1"]) == (first[0], "h2")
        # Plain HTTP on the TLS port is refused, never answered in the clear.
        plain = subprocess.run(["curl", "-sS", f"http://127.0.0.1:{rest}/healthz"], capture_output=True, timeout=30)
        assert plain.returncode != 0
        channel = grpc.secure_channel(f"localhost:{grpc_port}",
                                      grpc.ssl_channel_credentials(root_certificates=open(ca_path, "rb").read()))
        answer = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        assert peer_certificate(grpc_port, ca_path, ["h2"]) == (first[0], "h2")
    finally:
        server.stop()


def negotiated(port, ca_path, ciphers=None, tls12=False, alpn=("h2",)):
    """The (version, cipher) the server agrees to, or None when it refuses the handshake."""
    context = ssl.create_default_context(cafile=ca_path)
    context.set_alpn_protocols(list(alpn))
    if tls12:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    if ciphers:
        context.set_ciphers(ciphers + ":@SECLEVEL=0")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                return tls.version(), tls.cipher()[0]
    except (ssl.SSLError, ConnectionResetError):
        return None


def test_every_listener_offers_only_forward_secret_aead_suites(pki):
    directory, ca_path, _, _ = pki
    for name in ("emulator", "token-server"):
        os.mkdir(os.path.join(directory, name))
    emulator = Server(os.path.join(directory, "emulator"), ["emulator", "--in-memory", "--port", "0", "--grpc-port", "0",
                                  *tls_arguments(directory)],
                      [r"listening on https://127\.0\.0\.1:(\d+)", r"gRPC listening on 127\.0\.0\.1:(\d+) \(TLS\)"])
    token_server = Server(os.path.join(directory, "token-server"), ["token-server", "--port", "0",
                                      "--bcrypt-cost", "10", *tls_arguments(directory)],
                          [r"listening on https://127\.0\.0\.1:(\d+)"])
    try:
        for port in [*emulator.ports, *token_server.ports]:
            # Static-RSA key exchange, and ECDHE with CBC: refused.
            assert negotiated(port, ca_path, "AES128-SHA", tls12=True) is None, port
            assert negotiated(port, ca_path, "AES256-GCM-SHA384", tls12=True) is None, port
            assert negotiated(port, ca_path, "ECDHE-RSA-AES128-SHA", tls12=True) is None, port
            # ECDHE with AES-GCM or ChaCha20-Poly1305 over TLS 1.2, and TLS 1.3.
            assert negotiated(port, ca_path, "ECDHE-RSA-AES128-GCM-SHA256", tls12=True) == \
                ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), port
            assert negotiated(port, ca_path, "ECDHE-RSA-CHACHA20-POLY1305", tls12=True) == \
                ("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305"), port
            assert negotiated(port, ca_path)[0] == "TLSv1.3", port
    finally:
        emulator.stop()
        token_server.stop()


def test_certificate_swapped_on_sighup_keeps_open_connections(pki):
    directory, ca_path, first, second = pki
    server = Server(directory, ["emulator", "--in-memory", "--port", "0", "--grpc-port", "0", *tls_arguments(directory)],
                    [r"listening on https://127\.0\.0\.1:(\d+)", r"gRPC listening on 127\.0\.0\.1:(\d+) \(TLS\)"])
    try:
        rest, grpc_port = server.ports
        context = ssl.create_default_context(cafile=ca_path)
        kept = http.client.HTTPSConnection("localhost", rest, context=context, timeout=10)
        kept.request("GET", "/healthz")
        assert kept.getresponse().read() == b'{"status":"ok"}'
        socket_before = kept.sock
        assert kept.sock.getpeercert(binary_form=True) == first[0]
        channel = grpc.secure_channel(f"localhost:{grpc_port}",
                                      grpc.ssl_channel_credentials(root_certificates=open(ca_path, "rb").read()))
        health = health_pb2_grpc.HealthStub(channel)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == health_pb2.HealthCheckResponse.SERVING

        shutil.copy(second[1], os.path.join(directory, "server.pem"))
        shutil.copy(second[2], os.path.join(directory, "server.key"))
        server.process.send_signal(signal.SIGHUP)
        wait_until(lambda: peer_certificate(rest, ca_path, ["http/1.1"])[0] == second[0],
                   "the new certificate served after SIGHUP")
        assert peer_certificate(grpc_port, ca_path, ["h2"])[0] == second[0]

        # The connections opened before the swap go on, with the certificate they started with.
        kept.request("GET", "/healthz")
        assert kept.getresponse().read() == b'{"status":"ok"}'
        assert kept.sock is socket_before
        assert kept.sock.getpeercert(binary_form=True) == first[0]
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == health_pb2.HealthCheckResponse.SERVING

        # Without a signal: files that change are read again within seconds. A half-written pair (a key that is not
        # the certificate's) is refused and the certificate in use kept.
        shutil.copy(first[2], os.path.join(directory, "server.key"))
        wait_until(lambda: server.logged("TLS certificate not reloaded"), "the half-written pair refused (logged)")
        assert peer_certificate(rest, ca_path, ["http/1.1"])[0] == second[0]
        shutil.copy(first[1], os.path.join(directory, "server.pem"))
        wait_until(lambda: peer_certificate(rest, ca_path, ["http/1.1"])[0] == first[0],
                   "the changed files served without a signal")
        assert server.process.poll() is None
    finally:
        server.stop()


def test_token_server_https_and_bad_key_refused_at_start(pki):
    directory, ca_path, first, second = pki
    server = Server(directory, ["token-server", "--port", "0", "--bcrypt-cost", "10", *tls_arguments(directory)],
                    [r"Token server listening on https://127\.0\.0\.1:(\d+)"])
    try:
        (port,) = server.ports
        assert curl(ca_path, f"https://localhost:{port}/healthz") == ('{"status":"ok"}', "2")
        with open(os.path.join(directory, "fleetauth-data", "emulator-trust.json")) as f:
            assert f"https://127.0.0.1:{port}/service_accounts/v1/metadata/jwk/" in f.read()
    finally:
        server.stop()
    # A key that is not the certificate's: one line, exit 1.
    result = subprocess.run([BIN, "emulator", "--in-memory", "--port", "0", "--tls-certificate", first[1],
                             "--tls-key", second[2]], capture_output=True, text=True, timeout=60, cwd=directory)
    assert result.returncode == 1
    assert result.stderr.strip() == (f"Error: {second[2]} is not the private key of the certificate in {first[1]}. "
                                     "Check --tls-certificate and --tls-key.")
