"""A minimal Django project that is a real OpenID Provider: django-oauth-toolkit with OIDC enabled.

Used only by Tests/OIDC/test_real_provider.py. The environment gives the database directory, the issuer URL and
the RSA signing key (plus retired keys still published, for the rotation test).
"""
import os

DIRECTORY = os.environ["FLEETAUTH_OP_DIR"]
SECRET_KEY = "fleetauth-oidc-test-provider-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(DIRECTORY, "op.sqlite3")}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
STATIC_URL = "/static/"
LOGIN_URL = "/admin/login/"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; test users only


def _read(path):
    with open(path) as f:
        return f.read()


OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_ISS_ENDPOINT": os.environ["FLEETAUTH_OP_ISSUER"],
    "OIDC_RSA_PRIVATE_KEY": _read(os.environ["FLEETAUTH_OP_KEY"]),
    "OIDC_RSA_PRIVATE_KEYS_INACTIVE": [
        _read(path) for path in os.environ.get("FLEETAUTH_OP_RETIRED_KEYS", "").split(os.pathsep) if path
    ],
    "SCOPES": {"openid": "OpenID Connect scope"},
    "PKCE_REQUIRED": True,
}

# Server errors go to the log the test prints when something fails.
LOGGING = {
    "version": 1,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR"}},
}
