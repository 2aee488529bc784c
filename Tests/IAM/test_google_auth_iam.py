"""Google's own google-auth against the emulator's stand-ins for IAM and the metadata server.

`fleetauth emulator --iam-port 0 --iam-sign-as EMAIL` serves, on a loopback listener of its own, the metadata
server's token endpoint, IAM Credentials `signBlob` and `signJwt` (as the named accounts only), and the public keys
of the accounts whose key files it holds as JWK and x509 documents. The referee is
google-auth, unchanged: `google.auth.compute_engine.Credentials` reads the metadata server named by
`GCE_METADATA_HOST` (run in a child interpreter, because google-auth reads that variable when it is imported), and
`google.auth.iam.Signer` signs through `signBlob` (its endpoint constant pointed at the emulator: google-auth has no
setting for it). Everything stays on loopback.
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import google.auth.crypt
import google.auth.jwt
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FLEETAUTH_BIN", os.path.join(ROOT, ".build", "debug", "fleetauth"))
AUDIENCE = "https://fleetengine.googleapis.com/"

CHILD = r"""
import json, sys, time
import google.auth.compute_engine
import google.auth.iam
import google.auth.jwt
import google.auth.transport.requests

base, email = sys.argv[1], sys.argv[2]
google.auth.iam._IAM_SIGN_ENDPOINT = base + "/v1/projects/-/serviceAccounts/{}:signBlob"
request = google.auth.transport.requests.Request()
credentials = google.auth.compute_engine.Credentials()
credentials.refresh(request)
signer = google.auth.iam.Signer(request, credentials, email)
now = int(time.time())
claims = {"iss": email, "sub": email, "aud": "https://fleetengine.googleapis.com/", "iat": now, "exp": now + 600,
          "authorization": {"vehicleid": "v1"}}
token = google.auth.jwt.encode(signer, claims)
print(json.dumps({"runtime": credentials.service_account_email, "access_token_prefix": credentials.token[:5],
                  "token": token.decode() if isinstance(token, bytes) else token}))
"""


class Emulator:
    def __init__(self, directory):
        env = {k: v for k, v in os.environ.items() if k != "GOOGLE_APPLICATION_CREDENTIALS"}
        keys = directory / "keys"
        keys.mkdir()
        # The account the token server acts as (granted to the runtime identity), and a Fleet Engine role account
        # the emulator trusts and holds but must never sign as.
        for name in ("fleetauth-driver", "fleet-role"):
            subprocess.run([BIN, "keys", "create", "--project", "demo-project", "--name", name,
                            "--out", str(keys / f"{name}.json")], check=True, capture_output=True, timeout=120)
        with open(keys / "fleetauth-driver.json") as f:
            self.driver = json.load(f)
        with open(keys / "fleet-role.json") as f:
            self.role = json.load(f)
        trust = {"serviceAccounts": [
            {"email": self.driver["client_email"], "project": "demo-project",
             "roles": ["roles/fleetengine.driverSdkUser"], "keyFile": "keys/fleetauth-driver.json"},
            {"email": self.role["client_email"], "project": "demo-project",
             "roles": ["roles/fleetengine.serviceSuperUser"], "keyFile": "keys/fleet-role.json"},
        ]}
        with open(directory / "trust.json", "w") as f:
            json.dump(trust, f)
        self.process = subprocess.Popen(
            [BIN, "emulator", "--port", "0", "--grpc-port", "0", "--data", str(directory / "data"),
             "--trust", str(directory / "trust.json"), "--iam-port", "0", "--iam-sign-as", self.driver["client_email"]],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        text = ""
        self.port = self.iam_port = None
        # Read until both lines come (whenever they do), or the process ends.
        while self.port is None or self.iam_port is None:
            line = self.process.stdout.readline()
            if not line:
                break
            text += line
            found = re.search(r"emulator listening on http://127\.0\.0\.1:(\d+)", line)
            if found:
                self.port = int(found.group(1))
            found = re.search(r"stand-ins \(local use only\) on http://127\.0\.0\.1:(\d+)", line)
            if found:
                self.iam_port = int(found.group(1))
        if self.port is None or self.iam_port is None:
            raise RuntimeError("the emulator did not print both of its listening lines:\n" + text)
        self.api = f"http://127.0.0.1:{self.port}"
        self.base = f"http://127.0.0.1:{self.iam_port}"

    def get(self, path, headers=None, token=None, base=None):
        request = urllib.request.Request((base or self.base) + path, headers=headers or {})
        if token:
            request.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    server = Emulator(tmp_path_factory.mktemp("iam"))
    yield server
    server.stop()


def run_google_auth(emulator, email):
    host = f"127.0.0.1:{emulator.iam_port}"
    env = dict(os.environ, GCE_METADATA_HOST=host, GCE_METADATA_IP=host)
    env.pop("GOOGLE_APPLICATION_CREDENTIALS", None)
    result = subprocess.run([sys.executable, "-c", CHILD, emulator.base, email], capture_output=True, text=True,
                            env=env, timeout=60)
    return result


def test_compute_engine_credentials_and_iam_signer(emulator):
    email = emulator.driver["client_email"]
    result = run_google_auth(emulator, email)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["runtime"].startswith("fleetauth-runtime@demo-project")
    assert answer["access_token_prefix"] == "ya29."
    token = answer["token"]

    # The emulator's x509 document verifies what IAM signed, with google-auth's own decoder.
    status, body = emulator.get(f"/service_accounts/v1/metadata/x509/{email}")
    assert status == 200
    certificates = json.loads(body)
    assert list(certificates) == [emulator.driver["private_key_id"]]
    claims = google.auth.jwt.decode(token, certs=certificates, audience=AUDIENCE)
    assert claims["authorization"] == {"vehicleid": "v1"}

    # And Fleet Engine (the emulator) accepts it: no kid, so every key of the account is tried.
    status, _ = emulator.get("/v1/providers/demo-project/vehicles/v1", token=token, base=emulator.api)
    assert status == 404  # authenticated and authorized; the vehicle does not exist


def test_jwk_set_matches_the_key_file(emulator):
    email = emulator.driver["client_email"]
    status, body = emulator.get(f"/service_accounts/v1/metadata/jwk/{email}")
    assert status == 200
    keys = json.loads(body)["keys"]
    assert [key["kid"] for key in keys] == [emulator.driver["private_key_id"]]
    signer = google.auth.crypt.RSASigner.from_service_account_info(emulator.driver)
    token = google.auth.jwt.encode(signer, {"iss": email, "aud": AUDIENCE, "iat": int(time.time()),
                                            "exp": int(time.time()) + 60})
    status, body = emulator.get(f"/service_accounts/v1/metadata/x509/{email}")
    google.auth.jwt.decode(token, certs=json.loads(body), audience=AUDIENCE)


def test_refusals_are_googles(emulator):
    status, _ = emulator.get("/computeMetadata/v1/instance/service-accounts/default/token")
    assert status == 403
    result = run_google_auth(emulator, "nobody@demo-project.iam.gserviceaccount.com")
    assert result.returncode != 0
    assert "signBlob" in result.stderr
    # A Fleet Engine role account the emulator holds, but the runtime identity is not granted: IAM's 403.
    result = run_google_auth(emulator, emulator.role["client_email"])
    assert result.returncode != 0
    assert "PERMISSION_DENIED" in result.stderr or "403" in result.stderr, result.stderr


def test_api_port_does_not_serve_the_stand_ins(emulator):
    status, _ = emulator.get("/computeMetadata/v1/instance/service-accounts/default/token",
                             headers={"Metadata-Flavor": "Google"}, base=emulator.api)
    assert status == 404
    status, _ = emulator.get("/computeMetadata/v1/instance/service-accounts/default/token",
                             headers={"Metadata-Flavor": "Google"})
    assert status == 200


def test_stand_ins_refuse_an_address_beyond_loopback(tmp_path):
    result = subprocess.run([BIN, "emulator", "--port", "0", "--grpc-port", "0", "--in-memory", "--data", str(tmp_path),
                             "--iam-port", "0", "--iam-host", "0.0.0.0", "--iam-sign-as", "a@b.iam.gserviceaccount.com"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "loopback" in lines[0], result.stderr


def test_stand_ins_are_off_by_default(tmp_path):
    process = subprocess.Popen([BIN, "emulator", "--port", "0", "--grpc-port", "0", "--in-memory",
                                "--data", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = None
        while port is None:
            line = process.stdout.readline()
            if not line:
                break
            assert "stand-ins" not in line
            found = re.search(r"emulator listening on http://127\.0\.0\.1:(\d+)", line)
            if found:
                port = int(found.group(1))
        assert port is not None
        request = urllib.request.Request(f"http://127.0.0.1:{port}/computeMetadata/v1/instance/service-accounts/default/token",
                                         headers={"Metadata-Flavor": "Google"})
        try:
            urllib.request.urlopen(request, timeout=60)
            status = 200
        except urllib.error.HTTPError as error:
            status = error.code
        assert status == 404
    finally:
        process.terminate()
        process.wait(timeout=60)
