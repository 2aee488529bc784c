"""Google's own google-auth against the emulator's stand-ins for IAM and the metadata server.

`fleetauth emulator` serves, for the service accounts whose key files it holds, the metadata server's token
endpoint, IAM Credentials `signBlob` and `signJwt`, and the public keys as JWK and x509 documents. The referee is
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
        self.process = subprocess.Popen(
            [BIN, "emulator", "--port", "0", "--grpc-port", "0", "--data", str(directory / "data")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        text = ""
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            text += line
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", text)
            if found:
                self.port = int(found.group(1))
                break
        else:
            raise RuntimeError(text)
        self.base = f"http://127.0.0.1:{self.port}"
        with open(directory / "data" / "keys" / "driver-sdk-user.json") as f:
            self.driver = json.load(f)

    def get(self, path, headers=None, token=None):
        request = urllib.request.Request(self.base + path, headers=headers or {})
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
    env = dict(os.environ, GCE_METADATA_HOST=f"127.0.0.1:{emulator.port}", GCE_METADATA_IP=f"127.0.0.1:{emulator.port}")
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
    status, _ = emulator.get("/v1/providers/demo-project/vehicles/v1", token=token)
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
    email = emulator.driver["client_email"]
    status, _ = emulator.get("/computeMetadata/v1/instance/service-accounts/default/token")
    assert status == 403
    result = run_google_auth(emulator, "nobody@demo-project.iam.gserviceaccount.com")
    assert result.returncode != 0
    assert "signBlob" in result.stderr
