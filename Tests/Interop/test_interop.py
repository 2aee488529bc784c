"""Interoperability of FleetAuth's tokens with independent JWT libraries (PyJWT, google-auth).

Drives the built `fleetauth` binary ($FLEETAUTH_BIN, default .build/debug/fleetauth):
- tokens FleetAuth mints verify with PyJWT and with google-auth, header and claims exactly as Fleet Engine expects;
- tokens google-auth mints with a key file from `fleetauth keys create` verify with `fleetauth token verify`;
- tokens the independent libraries forge badly are refused with the right reason code.
"""
import base64
import json
import os
import subprocess
import time

import google.auth.crypt
import google.auth.jwt
import jwt as pyjwt
import pytest
from cryptography.hazmat.primitives import serialization

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FLEETAUTH_BIN", os.path.join(ROOT, ".build", "debug", "fleetauth"))
AUDIENCE = "https://fleetengine.googleapis.com/"


def fleetauth(*args, stdin=None):
    env = {k: v for k, v in os.environ.items() if k != "GOOGLE_APPLICATION_CREDENTIALS"}
    result = subprocess.run([BIN, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def key_file(tmp_path_factory):
    directory = tmp_path_factory.mktemp("keys")
    path = str(directory / "driver-sa.json")
    fleetauth("keys", "create", "--project", "demo-project", "--name", "driver-sa", "--out", path)
    return path


@pytest.fixture(scope="module")
def key_info(key_file):
    with open(key_file) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def jwks(key_file):
    return json.loads(fleetauth("keys", "jwks", key_file))


def b64json(segment):
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


TYPES = [
    (["--type", "server"], {"tripid": "*", "vehicleid": "*"}),
    (["--type", "driver", "--vehicle", "vehicle-1"], {"vehicleid": "vehicle-1"}),
    (["--type", "consumer", "--trip", "trip-1"], {"tripid": "trip-1"}),
    (["--type", "delivery_server"], {"taskid": "*", "trackingid": "*", "deliveryvehicleid": "*"}),
    (["--type", "delivery_consumer", "--tracking", "shipment_12345"], {"trackingid": "shipment_12345"}),
    (["--type", "untrusted_delivery_driver", "--delivery-vehicle", "driver_12345"], {"deliveryvehicleid": "driver_12345"}),
    (["--type", "trusted_delivery_driver", "--delivery-vehicle", "d1", "--task", "t1"], {"deliveryvehicleid": "d1", "taskid": "t1"}),
    (["--type", "delivery_fleet_reader"], {"taskid": "*", "trackingid": "*", "deliveryvehicleid": "*"}),
    (["--type", "fleet_reader"], {"tripid": "*", "taskid": "*", "trackingid": "*", "vehicleid": "*", "deliveryvehicleid": "*"}),
]


@pytest.mark.parametrize("args,authorization", TYPES)
def test_pyjwt_verifies_fleetauth_tokens(key_file, key_info, jwks, args, authorization):
    token = fleetauth("token", "mint", "--key", key_file, *args)
    header = pyjwt.get_unverified_header(token)
    assert header == {"alg": "RS256", "typ": "JWT", "kid": key_info["private_key_id"]}
    key = pyjwt.PyJWK(jwks["keys"][0])
    claims = pyjwt.decode(token, key=key, algorithms=["RS256"], audience=AUDIENCE,
                          issuer=key_info["client_email"], options={"require": ["exp", "iat", "iss", "sub", "aud"]})
    assert claims["sub"] == claims["iss"] == key_info["client_email"]
    assert claims["authorization"] == authorization
    assert isinstance(claims["iat"], int) and isinstance(claims["exp"], int)
    assert claims["exp"] - claims["iat"] == 3600
    assert abs(claims["iat"] - time.time()) < 60
    # Integer seconds on the wire, unescaped slashes, as Google's libraries write them.
    raw = base64.urlsafe_b64decode(token.split(".")[1] + "==").decode()
    assert '"aud":"https://fleetengine.googleapis.com/"' in raw


def test_google_auth_verifies_fleetauth_tokens(key_file, key_info):
    token = fleetauth("token", "mint", "--key", key_file, "--type", "driver", "--vehicle", "v1")
    private = serialization.load_pem_private_key(key_info["private_key"].encode(), password=None)
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    claims = google.auth.jwt.decode(token, certs={key_info["private_key_id"]: public_pem}, audience=AUDIENCE)
    assert claims["authorization"] == {"vehicleid": "v1"}


def test_google_auth_credentials_tokens_verify_with_fleetauth(key_file):
    credentials = google.auth.jwt.Credentials.from_service_account_file(
        key_file, audience=AUDIENCE, additional_claims={"authorization": {"vehicleid": "v1"}})
    credentials.refresh(None)  # a self-signed JWT: no network
    token = credentials.token if isinstance(credentials.token, str) else credentials.token.decode()
    verdict = fleetauth("token", "verify", "--key", key_file, token)
    assert verdict.startswith("VALID ")
    assert json.loads(verdict[6:])["authorization"] == {"vehicleid": "v1"}


def test_google_auth_encode_tokens_verify_with_fleetauth(key_file, key_info):
    signer = google.auth.crypt.RSASigner.from_service_account_file(key_file)
    now = int(time.time())
    payload = {"iss": key_info["client_email"], "sub": key_info["client_email"], "aud": AUDIENCE,
               "iat": now, "exp": now + 3600, "authorization": {"tripid": "trip-7"}}
    token = google.auth.jwt.encode(signer, payload).decode()
    assert fleetauth("token", "verify", "--key", key_file, token).startswith("VALID ")
    # Without kid (as IAM signBlob signs): tried against the issuer's keys.
    no_kid = pyjwt.encode(payload, key_info["private_key"], algorithm="RS256", headers={"typ": "JWT"})
    assert "kid" not in pyjwt.get_unverified_header(no_kid)
    assert fleetauth("token", "verify", "--key", key_file, no_kid).startswith("VALID ")


def test_independently_forged_bad_tokens_are_refused(key_file, key_info, jwks):
    now = int(time.time())
    base = {"iss": key_info["client_email"], "sub": key_info["client_email"], "aud": AUDIENCE,
            "iat": now, "exp": now + 3600, "authorization": {"vehicleid": "v1"}}
    kid = {"kid": key_info["private_key_id"]}
    pem = key_info["private_key"]
    public_pem = serialization.load_pem_private_key(pem.encode(), None).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    cases = [
        (pyjwt.encode({**base, "exp": now - 1, "iat": now - 3601}, pem, algorithm="RS256", headers=kid), "expired"),
        (pyjwt.encode({**base, "exp": now + 7200}, pem, algorithm="RS256", headers=kid), "expiration_too_far"),
        (pyjwt.encode({**base, "aud": [AUDIENCE]}, pem, algorithm="RS256", headers=kid), "invalid_audience"),
        (pyjwt.encode({**base, "aud": AUDIENCE[:-1]}, pem, algorithm="RS256", headers=kid), "invalid_audience"),
        (pyjwt.encode({**base, "sub": "other@demo-project.iam.gserviceaccount.com"}, pem, algorithm="RS256", headers=kid), "subject_mismatch"),
        (pyjwt.encode({k: v for k, v in base.items() if k != "authorization"}, pem, algorithm="RS256", headers=kid), "missing_authorization"),
        (pyjwt.encode(base, pem, algorithm="PS256", headers=kid), "unsupported_algorithm"),
        (pyjwt.encode(base, pem, algorithm="RS512", headers=kid), "unsupported_algorithm"),
        (pyjwt.encode(base, None, algorithm="none"), "malformed_token"),
        (pyjwt.encode({**base, "iat": now + 3600, "exp": now + 3601}, pem, algorithm="RS256", headers=kid), "issued_in_future"),
        (pyjwt.encode({**base, "exp": now + 3600.5}, pem, algorithm="RS256", headers=kid), "invalid_expiration"),
        (pyjwt.encode(base, pem, algorithm="RS256", headers={"kid": "unknown"}), "unknown_kid"),
        (pyjwt.encode(base, pem, algorithm="RS256", headers={**kid, "jku": "http://127.0.0.1/keys"}), "untrusted_key_reference"),
    ]
    # Algorithm confusion: HS256 keyed with the RSA public key (PyJWT refuses to do this itself, so sign by hand).
    import hashlib
    import hmac
    signing_input = pyjwt.encode(base, "k" * 32, algorithm="HS256", headers=kid).rsplit(".", 1)[0]
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    cases.append((signing_input + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode(), "unsupported_algorithm"))
    verdicts = fleetauth("token", "verify", "--key", key_file, "--batch",
                         stdin="\n".join(token for token, _ in cases) + "\n").split("\n")
    assert verdicts == [f"INVALID {reason}" for _, reason in cases]
