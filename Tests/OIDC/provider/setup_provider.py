"""Creates the provider's users and client applications; prints them as JSON (run with `manage.py shell`)."""
import json

from django.contrib.auth import get_user_model
from oauth2_provider.models import Application

REDIRECT = "http://127.0.0.1/callback"


def secret(client_id):
    return f"{client_id}-secret-at-least-32-bytes-long"  # HS256 needs a 256-bit key


users = {}
for name in ["alice", "bob"]:
    user = get_user_model().objects.create_user(name, password=f"{name}-password", is_staff=True)
    users[name] = str(user.pk)
clients = {}
for client_id, algorithm in [("fleet-app", "RS256"), ("other-app", "RS256"), ("hmac-app", "HS256")]:
    Application.objects.create(
        client_id=client_id, client_secret=secret(client_id), name=client_id,
        client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT, algorithm=algorithm, skip_authorization=True,
        hash_client_secret=algorithm != "HS256")  # an HS256 key must be the plain secret
    clients[client_id] = secret(client_id)
print(json.dumps({"users": users, "clients": clients, "redirect": REDIRECT}))
