"""The token server against a real OpenID Provider: django-oauth-toolkit's OIDC server (from PyPI), not one written here.

Starts the provider (Django's server on a free loopback port, an RSA signing key made here), logs its users in with
the authorization-code flow and PKCE as an app would, and hands the ID tokens to `fleetauth token-server
--oidc-issuer … --oidc-audience …` ($FLEETAUTH_BIN). Checks: a linked user gets a session and Fleet Engine tokens for
its grants; an unlinked identity, another client's token and an HS256 token are refused with the password login's
401; after the provider rotates its key (restarted with a new one, the old still published) a new token is accepted
after one refetch; with the provider down, logins are refused and the server keeps running.
"""
import base64
import hashlib
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FLEETAUTH_BIN", os.path.join(ROOT, ".build", "debug", "fleetauth"))
PROVIDER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "provider")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_key(path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return path


def wait_for(url, process, log_path, timeout=60):
    def answers():
        if process.poll() is not None:
            with open(log_path) as f:
                raise AssertionError(f"the process serving {url} stopped:\n{f.read()}")
        try:
            return requests.get(url, timeout=10).status_code == 200
        except requests.RequestException:
            return False
    wait_until(answers, f"{url} answering 200")


class Provider:
    def __init__(self, directory):
        self.directory = directory
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.issuer = self.base + "/o"
        self.key = new_key(os.path.join(directory, "op-key-1.pem"))
        self.retired = []
        self.process = None
        out = self.manage("migrate", "--noinput")
        out = self.manage("shell", "--command", open(os.path.join(PROVIDER_DIR, "setup_provider.py")).read())
        self.setup = json.loads(out.strip().splitlines()[-1])

    def env(self):
        return {**os.environ, "FLEETAUTH_OP_DIR": self.directory, "FLEETAUTH_OP_ISSUER": self.issuer,
                "FLEETAUTH_OP_KEY": self.key, "FLEETAUTH_OP_RETIRED_KEYS": os.pathsep.join(self.retired)}

    def manage(self, *args):
        result = subprocess.run([sys.executable, os.path.join(PROVIDER_DIR, "manage.py"), *args],
                                capture_output=True, text=True, env=self.env(), timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def start(self):
        self.log = os.path.join(self.directory, "op.log")
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(PROVIDER_DIR, "manage.py"), "runserver", f"127.0.0.1:{self.port}",
             "--noreload"], env=self.env(), stdout=open(self.log, "a"), stderr=subprocess.STDOUT)
        wait_for(self.issuer + "/.well-known/openid-configuration", self.process, self.log)

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None

    def rotate(self):
        """Restarts with a new signing key; the old one stays published (OIDC_RSA_PRIVATE_KEYS_INACTIVE)."""
        self.stop()
        self.retired.append(self.key)
        self.key = new_key(os.path.join(self.directory, f"op-key-{len(self.retired) + 1}.pem"))
        self.start()

    def id_token(self, username, client_id="fleet-app"):
        """Logs `username` in and runs the authorization-code flow with PKCE, as an app's sign-in would."""
        browser = requests.Session()
        browser.get(self.base + "/admin/login/")
        answer = browser.post(self.base + "/admin/login/", allow_redirects=False, data={
            "username": username, "password": f"{username}-password", "next": "/admin/",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"]}, headers={"Referer": self.base + "/admin/login/"})
        assert answer.status_code == 302, answer.text[:500]
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        answer = browser.get(self.base + "/o/authorize/", allow_redirects=False, params={
            "response_type": "code", "client_id": client_id, "redirect_uri": self.setup["redirect"],
            "scope": "openid", "state": "s", "nonce": secrets.token_hex(8),
            "code_challenge": challenge, "code_challenge_method": "S256"})
        assert answer.status_code == 302, answer.text[:500]
        query = urllib.parse.parse_qs(urllib.parse.urlparse(answer.headers["Location"]).query)
        answer = requests.post(self.base + "/o/token/", data={
            "grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": self.setup["redirect"],
            "client_id": client_id, "client_secret": self.setup["clients"][client_id], "code_verifier": verifier})
        assert answer.status_code == 200, answer.text[:500]
        return answer.json()["id_token"]


def header(token):
    segment = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def fleetauth(*args):
    result = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


class TokenServer:
    def __init__(self, directory, provider):
        self.data = os.path.join(directory, "fleetauth-data")
        self.log = os.path.join(directory, "token-server.log")
        self.process = subprocess.Popen(
            [BIN, "token-server", "--data", self.data, "--port", "0", "--bcrypt-cost", "10",
             "--oidc-issuer", provider.issuer, "--oidc-audience", "fleet-app",
             "--oidc-issuer", provider.issuer, "--oidc-audience", "hmac-app"],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        def listening():
            text = open(self.log).read()
            assert self.process.poll() is None, text
            return re.search(r"listening on (http://127\.0\.0\.1:\d+)", text)
        self.base = wait_until(listening, "the token server printing its port").group(1)

    def login(self, body):
        return requests.post(self.base + "/v1/sessions", json=body, timeout=30)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def stack():
    with tempfile.TemporaryDirectory() as directory:
        provider = Provider(directory)
        provider.start()
        server = None
        try:
            server = TokenServer(directory, provider)
            alice = provider.setup["users"]["alice"]
            fleetauth("users", "add", "alice", "--role", "driver", "--subject", alice, "--issuer", provider.issuer,
                      "--data", server.data)
            fleetauth("users", "grant", "alice", "--vehicle", "v1", "--data", server.data)
            yield provider, server
        finally:
            if server:
                server.stop()
            provider.stop()


def test_startup_reads_the_providers_keys(stack):
    provider, server = stack
    assert f"ID tokens of {provider.issuer}: 1 signing keys" in open(server.log).read()


def test_a_linked_user_logs_in_with_the_providers_id_token(stack):
    provider, server = stack
    token = provider.id_token("alice")
    assert header(token)["alg"] == "RS256" and header(token).get("kid")
    answer = server.login({"idToken": token})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["username"] == "alice" and body["role"] == "driver"
    session = body["sessionToken"]
    fleet = requests.get(server.base + "/token/driver/v1", headers={"Authorization": f"Bearer {session}"})
    assert fleet.status_code == 200 and fleet.json()["token"].count(".") == 2
    denied = requests.get(server.base + "/token/driver/v2", headers={"Authorization": f"Bearer {session}"})
    assert denied.status_code == 403


def test_refusals_look_like_a_wrong_password(stack):
    provider, server = stack
    wrong_password = server.login({"username": "alice", "password": "not her password"})
    assert wrong_password.status_code == 401
    bob = provider.id_token("bob")                            # nobody is linked to bob
    other = provider.id_token("alice", client_id="other-app")  # a client the server does not accept
    hmac = provider.id_token("alice", client_id="hmac-app")    # HS256, keyed with the client secret
    assert header(hmac)["alg"] == "HS256"
    for token in [bob, other, hmac, bob[:-4] + "AAAA"]:
        answer = server.login({"idToken": token})
        assert answer.status_code == 401, answer.text
        assert answer.json() == wrong_password.json()


def test_a_rotated_provider_key_is_fetched_and_accepted(stack):
    provider, server = stack
    old_kid = header(provider.id_token("alice"))["kid"]
    provider.rotate()
    token = provider.id_token("alice")
    assert header(token)["kid"] != old_kid
    answer = server.login({"idToken": token})
    assert answer.status_code == 201, answer.text


def test_provider_down_fails_closed_and_the_server_keeps_running(stack):
    provider, server = stack
    token = provider.id_token("alice")
    provider.stop()
    try:
        # Keys already read still verify; a token naming a key not yet read cannot be checked and is refused.
        forged = token.split(".")
        head = header(token)
        head["kid"] = "a-key-nobody-published"
        forged[0] = base64.urlsafe_b64encode(json.dumps(head).encode()).rstrip(b"=").decode()
        answer = server.login({"idToken": ".".join(forged)})
        assert answer.status_code == 401
        assert server.process.poll() is None
        assert requests.get(server.base + "/healthz").status_code == 200
    finally:
        provider.start()
