"""agentweb settings: one file, driven by the environment. Every variable is listed in the README."""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from agentweb.keyfile import secret_key_from_file

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


# Off unless asked for: `make run` serves people, and Django's debug pages list every URL and setting.
DEBUG = env_bool("DJANGO_DEBUG", False)
# Without DJANGO_SECRET_KEY, a random key made on the first start and kept in a git-ignored file (agentweb/keyfile.py).
SECRET_KEY_FILE = Path(env_str("DJANGO_SECRET_KEY_FILE") or BASE_DIR / ".secret_key")
SECRET_KEY = env_str("DJANGO_SECRET_KEY") or secret_key_from_file(SECRET_KEY_FILE)
# Fernet keys that encrypt model API keys and HTTP-tool headers in the database: the first encrypts, all decrypt
# (agentweb/secretbox.py, docs/deploy.md "Secrets at rest"). Empty: a key derived from SECRET_KEY.
AGENTWEB_SECRET_KEYS = env_list("AGENTWEB_SECRET_KEYS", [])

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # Before channels: its `runworker` command (chat/management/commands/runworker.py) is the one manage.py runs.
    "chat",
    "channels",
    "tools.apps.ToolsConfig",
    "modelconfig",
    "sharing",
    "mcpservers",
    "mcpconnect",  # issue 40: each person's own MCP connections
    "agents",
    "attachments",
    "api",
    "hooks",  # issue 39: webhook triggers
    "inbox",  # issue 39: the approvals inbox (docs/background.md)
    "notifications",
    "schedules",
    "sso",  # issue 40: sign-in with the organisation's OpenID Connect provider (docs/teams.md)
    "audit",  # issue 40: the audit log (docs/teams.md)
    "languages",  # issue 41: the page's language, chosen by the browser or the person (docs/ui.md, Languages)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language: the cookie, else the browser's Accept-Language; a signed-in person's own choice overrides both
    # (languages.middleware, after the authentication).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "languages.middleware.PersonLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "agentweb.security.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "agentweb.urls"
ASGI_APPLICATION = "agentweb.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # issue 39, inbox: the top bar's count of what waits for the person (read only where shown).
                "inbox.context_processors.inbox_count",
                # issue 40: the login page's provider button and password form.
                "sso.context_processors.sign_in",
            ],
        },
    },
]

# --- database: SQLite by default, tuned for a server that writes from several threads ---
SQLITE_OPTIONS = {
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
}
DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
# Persistent connections, checked before reuse: channels closes "old" connections around every
# database_sync_to_async call, and with CONN_MAX_AGE=0 each call opened a new one. Connections are per thread:
# the runs' ORM calls share the one thread of thread-sensitive sync_to_async, and page views the few threads
# agentweb/http_handler.py keeps, so a process holds a handful. PostgreSQL pools instead.
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=600, conn_health_checks=True)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {**SQLITE_OPTIONS, **DATABASES["default"].get("OPTIONS", {})}
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Under Django's own ASGI handler each page view ran in a thread of its own, so a persistent connection (per
    # thread) was never used twice and every page opened a new PostgreSQL connection. A pool per process lends
    # connections whatever thread asks (Django's own, psycopg_pool; persistent connections and pooling exclude
    # each other, so CONN_MAX_AGE is 0 and "closing" a connection gives it back).
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "pool": {"min_size": 1, "max_size": env_int("AGENTWEB_DB_POOL_SIZE", 10), "timeout": 20},
        **DATABASES["default"].get("OPTIONS", {}),
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Threads a process keeps for the synchronous part of page views (agentweb/http_handler.py); a request beyond
# this many at once waits for one. Each keeps its database connection, so keep it at or under the pool size.
AGENTWEB_HTTP_THREADS = env_int("AGENTWEB_HTTP_THREADS", 8)

# --- channel layer: Redis when configured, else in-memory (one process) ---
REDIS_URL = env_str("REDIS_URL")
# Several deployments (or test runs) can share one Redis under different prefixes (channel layer, event log).
AGENTWEB_REDIS_PREFIX = env_str("AGENTWEB_REDIS_PREFIX", "agentweb")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # channels_redis's, reading a process's waiting messages many per round trip (delivery/redis_layer.py).
            "BACKEND": "delivery.redis_layer.RedisChannelLayer",
            "CONFIG": {
                "hosts": [REDIS_URL],
                # Messages a channel holds before sends to it fail: a socket that stops reading loses its
                # events (it catches up from a snapshot) rather than Redis holding them without bound.
                "capacity": env_int("AGENTWEB_CHANNEL_CAPACITY", 1000),
                # What Redis holds for all of one process's sockets together (delivery/redis_layer.py).
                "process_capacity": env_int("AGENTWEB_CHANNEL_PROCESS_CAPACITY", 50_000),
                "expiry": 60,
                "prefix": AGENTWEB_REDIS_PREFIX,
            },
        }
    }
else:
    # channels' in-memory layer, minus its per-message clean-up and copies (delivery/memory_layer.py).
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "delivery.memory_layer.InMemoryChannelLayer", "CONFIG": {"capacity": 1000}}
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# --- sign-in with the organisation's OpenID Connect provider (issue 40; sso/, docs/teams.md "Sign-in") ---
# The issuer's URL turns it on: its endpoints and keys are read from its discovery document (sso/discovery.py).
AGENTWEB_OIDC_ISSUER = env_str("AGENTWEB_OIDC_ISSUER").strip()
AGENTWEB_OIDC_CLIENT_ID = env_str("AGENTWEB_OIDC_CLIENT_ID")
AGENTWEB_OIDC_CLIENT_SECRET = env_str("AGENTWEB_OIDC_CLIENT_SECRET")
# The login page's button: "Sign in with <name>".
AGENTWEB_OIDC_NAME = env_str("AGENTWEB_OIDC_NAME") or "single sign-on"
# Space- or comma-separated; "openid" is always asked for.
AGENTWEB_OIDC_SCOPES = [
    scope for scope in env_str("AGENTWEB_OIDC_SCOPES", "openid email profile").replace(",", " ").split() if scope
]
if "openid" not in AGENTWEB_OIDC_SCOPES:
    AGENTWEB_OIDC_SCOPES.insert(0, "openid")
# The claim (ID token or userinfo) whose values are the person's groups, synced on every sign-in (sso/groups.py).
AGENTWEB_OIDC_GROUPS_CLAIM = env_str("AGENTWEB_OIDC_GROUPS_CLAIM") or "groups"
# Group values that make a person staff / a superuser; empty: the admin decides, the claim does not.
AGENTWEB_OIDC_STAFF_GROUPS = env_list("AGENTWEB_OIDC_STAFF_GROUPS", [])
AGENTWEB_OIDC_SUPERUSER_GROUPS = env_list("AGENTWEB_OIDC_SUPERUSER_GROUPS", [])
# Off: the login form is gone and a password is refused everywhere (Django's model backend is not installed).
AGENTWEB_PASSWORD_LOGIN = env_bool("AGENTWEB_PASSWORD_LOGIN", True)
if AGENTWEB_OIDC_ISSUER and not AGENTWEB_OIDC_CLIENT_ID:
    raise ImproperlyConfigured("AGENTWEB_OIDC_ISSUER is set but AGENTWEB_OIDC_CLIENT_ID is not (docs/teams.md).")
if not AGENTWEB_PASSWORD_LOGIN and not AGENTWEB_OIDC_ISSUER:
    raise ImproperlyConfigured("AGENTWEB_PASSWORD_LOGIN=false needs AGENTWEB_OIDC_ISSUER: nobody could sign in.")
# The sso backend is Django's ModelBackend too (permissions); installed always, so that a session it made stays
# valid whatever the password setting, and it answers only the provider's callback.
AUTHENTICATION_BACKENDS = (["django.contrib.auth.backends.ModelBackend"] if AGENTWEB_PASSWORD_LOGIN else []) + [
    "sso.backend.OIDCBackend"
]
# mozilla-django-oidc's own settings, from the above (the endpoints come from discovery, not from here).
OIDC_RP_CLIENT_ID = AGENTWEB_OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = AGENTWEB_OIDC_CLIENT_SECRET
OIDC_RP_SCOPES = " ".join(AGENTWEB_OIDC_SCOPES)
OIDC_USE_PKCE = True  # S256 (RFC 7636)
OIDC_USE_NONCE = True
OIDC_AUTHENTICATION_CALLBACK_URL = "sso:callback"
# The ID token is kept in the session only to end the provider's session on sign-out (its id_token_hint).
OIDC_STORE_ID_TOKEN = True
OIDC_OP_LOGOUT_URL_METHOD = "sso.views.provider_logout_url"

# The languages of the pages (docs/ui.md, Languages): each named in itself, as a picker shows them. The catalogues are
# in locale/ (the .po files; the .mo files are built by `make install`: manage.py compilemessages).
LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("es", "Español"),
    ("zh-hans", "简体中文"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
# English dates as the pages always wrote them ("6 Dec 2026"); the other languages use Django's own formats.
FORMAT_MODULE_PATH = ["agentweb.formats"]
LANGUAGE_COOKIE_NAME = "agentweb_language"
LANGUAGE_COOKIE_AGE = 365 * 86400
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

# --- security headers and cookies (docs/deploy.md) ---
from agentweb.security import DEFAULT_CSP  # noqa: E402

AGENTWEB_CSP = env_str("AGENTWEB_CSP", DEFAULT_CSP)
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
# Behind TLS (every production deployment): cookies only over HTTPS, HSTS, and trust the proxy's scheme header.
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", False)
BEHIND_TLS_PROXY = env_bool("DJANGO_BEHIND_TLS_PROXY", False)
if BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Secure cookies when the app is known to be served over HTTPS: `make run` on plain http://127.0.0.1:8000 has
# debug off too, and a browser would not send such cookies back to it (no login).
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", BEHIND_TLS_PROXY or SECURE_SSL_REDIRECT)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# /healthz (agentweb/health.py) answers over plain HTTP: health checks run inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# Every line is printed once, by the root logger's one handler: loggers only set their level and propagate.
# A second handler on a logger that also propagates printed each of its lines twice under Daphne, whose command
# line gives the root logger a handler of its own (logging.basicConfig) before Django configures this; this
# configuration replaces that handler, so Daphne's own lines come out here too, in the same format.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {
        "no_url_credentials": {"()": "agentweb.logfilters.NoUrlCredentials"},
        "no_url_queries": {"()": "agentweb.logfilters.NoUrlQueries"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["no_url_credentials"]}
    },
    "root": {"handlers": ["console"], "level": "INFO"},
    "loggers": {
        "agentweb": {"level": env_str("AGENTWEB_LOG_LEVEL", "INFO")},
        # Django's defaults give "django" a console handler of its own (with DEBUG on): its lines go to the root.
        "django": {"handlers": [], "level": "INFO"},
        # `runworker` says which channels it reads: the line that tells an operator the worker is up.
        "django.channels.worker": {"level": "INFO"},
        # A view's unhandled exception, with its traceback. Django's own console handler prints only with debug on
        # (and its e-mail to ADMINS goes nowhere here), so with debug off the person sees a 500 page and the
        # operator would see nothing; with debug on, its "Not Found" warnings too, as Django prints them then.
        # Printed here and not passed up, so it is printed once.
        "django.request": {"handlers": ["console"], "level": "WARNING" if DEBUG else "ERROR", "propagate": False},
        # The MCP SDK's HTTP client logs every request line at INFO with its URL, whose query may carry a token, and
        # its streamable-HTTP transport logs session IDs and reconnect chatter: secrets never go into a log line.
        "httpx2": {"level": "WARNING"},
        # Its one WARNING line prints a redirect's target as the server sent it: queries are masked.
        "mcp.client.streamable_http": {"level": "WARNING", "filters": ["no_url_queries"]},
    },
}


# --- agentweb ---
# The default model comes from the environment (docs/protocol.md, "Model configuration").
def env_float(name: str, default: float | None) -> float | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number of seconds, not {value!r}") from None


def default_api_key(api: str, base_url: str) -> str:
    """AGENTWEB_LLM_API_KEY, else the key variable of the API in use: never one API's key sent to another."""
    resolved = api.lower() or ("openai" if base_url else "demo")
    fallback = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}.get(resolved, "")
    return env_str("AGENTWEB_LLM_API_KEY") or (env_str(fallback) if fallback else "")


# The default model comes from the environment (docs/protocol.md and docs/models.md).
AGENTWEB_LLM = {
    "api": env_str("AGENTWEB_LLM_API"),
    "base_url": env_str("AGENTWEB_LLM_BASE_URL"),
    "model": env_str("AGENTWEB_LLM_MODEL"),
    "api_key": default_api_key(env_str("AGENTWEB_LLM_API"), env_str("AGENTWEB_LLM_BASE_URL")),
    "tool_protocol": env_str("AGENTWEB_LLM_TOOL_PROTOCOL", "native"),
    "max_attempts": env_int("AGENTWEB_LLM_MAX_ATTEMPTS", 3),
    "timeout": env_float("AGENTWEB_LLM_TIMEOUT", 600.0),
    "connect_timeout": env_float("AGENTWEB_LLM_CONNECT_TIMEOUT", None),
    "read_timeout": env_float("AGENTWEB_LLM_READ_TIMEOUT", None),
}
AGENTWEB_MAX_STEPS = env_int("AGENTWEB_MAX_STEPS", 25)
# Whether the environment's default model takes images (a model configuration row says so for its own model).
AGENTWEB_LLM_SUPPORTS_IMAGES = env_bool("AGENTWEB_LLM_SUPPORTS_IMAGES", False)
# Tokens (input and output, every model call) a person may spend per day (UTC) before new runs are refused with
# error budget_exhausted; a run in progress finishes. 0: no budget (docs/usage.md).
AGENTWEB_DAILY_TOKEN_BUDGET = env_int("AGENTWEB_DAILY_TOKEN_BUDGET", 0)
# The tokens of a person's budget each of their runs still running holds back until its usage is written: a new run
# starts only while the budget is above what is spent plus that (docs/usage.md).
AGENTWEB_BUDGET_RUN_RESERVE = env_int("AGENTWEB_BUDGET_RUN_RESERVE", 4000)
# Written before every cost the admin shows ($0.0042): the currency of the model configurations' prices, which the
# app does not know ("€", "CHF ", or empty for none; docs/usage.md).
AGENTWEB_CURRENCY = env_str("AGENTWEB_CURRENCY", "$")
# People may make their own agents from the chat page (docs/agents.md); admins always can, in the admin.
AGENTWEB_USER_AGENTS = env_bool("AGENTWEB_USER_AGENTS", False)
AGENTWEB_SYSTEM_PROMPT = env_str(
    "AGENTWEB_SYSTEM_PROMPT",
    "You are a helpful assistant. Use the tools you are given when they help; answer concisely.",
)
# How model servers are read (providers/client.py): "streaming" (providers/transport.py) or "httpcore" (httpx's own).
AGENTWEB_LLM_TRANSPORT = env_str("AGENTWEB_LLM_TRANSPORT") or "streaming"
# Seconds between two pauses of the demo model's words, so a person sees it stream.
AGENTWEB_DEMO_DELAY = float(env_str("AGENTWEB_DEMO_DELAY", "0.03"))
# Crash safety: a streaming assistant message's text is also written this often once it has streamed this long
# (chat/flush.py; it is always written when the message ends and when the run stops). A crash loses about this much.
AGENTWEB_FLUSH_INTERVAL = float(env_str("AGENTWEB_FLUSH_INTERVAL", "2.0"))
# At most one delta frame per stream per this many seconds; the first piece is never held back.
AGENTWEB_COALESCE_WINDOW = float(env_str("AGENTWEB_COALESCE_WINDOW", "0.016"))
# A tool's progress reports (tool_call.progress): the first at once, then at most one frame per call per this many
# seconds, carrying the latest value.
AGENTWEB_PROGRESS_WINDOW = env_float("AGENTWEB_PROGRESS_WINDOW", 0.1)
# A tool's request for the person's input (tool_call.input_requested) left unanswered this long is cancelled; the
# time a call waits for an answer does not count against the tool's own timeout.
AGENTWEB_INPUT_TIMEOUT = env_float("AGENTWEB_INPUT_TIMEOUT", 600.0)
# Runs execute in `manage.py runworker agentweb-runs` processes (needs REDIS_URL) instead of the Daphne
# process that received the message; a run then outlives the Daphne process that started it.
AGENTWEB_RUN_WORKERS = env_bool("AGENTWEB_RUN_WORKERS", False)
if AGENTWEB_RUN_WORKERS and not REDIS_URL:
    raise ImproperlyConfigured("AGENTWEB_RUN_WORKERS=true needs REDIS_URL: workers are fed through Redis.")
# The process running a run writes a heartbeat this often; a run whose heartbeat is older than the stale
# limit belongs to a process that died, and becomes interrupted.
AGENTWEB_HEARTBEAT_SECONDS = env_float("AGENTWEB_HEARTBEAT_SECONDS", 10.0)
AGENTWEB_RUN_STALE_SECONDS = env_float("AGENTWEB_RUN_STALE_SECONDS", 45.0)
# With AGENTWEB_RUN_WORKERS: a handed-over run that no worker has taken after this long fails, saying so.
AGENTWEB_RUN_HANDOVER_SECONDS = env_float("AGENTWEB_RUN_HANDOVER_SECONDS", 15.0)
AGENTWEB_MAX_FRAME_BYTES = env_int("AGENTWEB_MAX_FRAME_BYTES", 256 * 1024)
# An HTTP request's body, on every route but the upload's (whose limit is AGENTWEB_ATTACHMENT_MAX_BYTES): a body over
# it is refused (413) as soon as its length says so, before it is read (docs/deploy.md, "Limits and timeouts").
AGENTWEB_MAX_REQUEST_BODY_BYTES = env_int("AGENTWEB_MAX_REQUEST_BODY_BYTES", 1024 * 1024)
# Not from the environment: the functions giving (path prefix, a 413's JSON body there) for routes that answer in an
# error shape of their own (the APIs, api/errors.py); elsewhere a 413 is `{"error": text}`.
AGENTWEB_TOO_LARGE_SHAPES = ["api.errors.too_large_shapes"]
# Seconds within which a request's line and headers must have arrived (from the connection's opening, or its previous
# response); a body must then keep up AGENTWEB_REQUEST_BODY_MIN_RATE bytes a second. Too slow: 408, closed. 0: off.
AGENTWEB_REQUEST_TIMEOUT = env_float("AGENTWEB_REQUEST_TIMEOUT", 20.0)
AGENTWEB_REQUEST_BODY_MIN_RATE = env_int("AGENTWEB_REQUEST_BODY_MIN_RATE", 1024)
# Sync tools run in a pool of their own (tools/pool.py), never in the threads of DNS lookups or the ORM;
# one tool runs in at most AGENTWEB_TOOL_THREADS_PER_TOOL of them, so a tool that hangs starves no other.
AGENTWEB_TOOL_THREADS = env_int("AGENTWEB_TOOL_THREADS", 16)
AGENTWEB_TOOL_THREADS_PER_TOOL = env_int("AGENTWEB_TOOL_THREADS_PER_TOOL", 4)
# Dotted modules whose @tool functions join the built-ins (tools/registry.py, docs/tools.md).
AGENTWEB_TOOL_MODULES = env_list("AGENTWEB_TOOL_MODULES", [])
# Hosts fetch_url and HTTP tools may reach although they are private or local, besides the admin's list
# (tools/services.py allowed_hosts).
AGENTWEB_FETCH_ALLOWED_HOSTS = env_list("AGENTWEB_FETCH_ALLOWED_HOSTS", [])
# The frames that make a model request, per user (across processes when they share Redis): a burst of this many,
# then this many per minute (chat/ratelimit.py).
AGENTWEB_SEND_BURST = env_int("AGENTWEB_SEND_BURST", 10)
AGENTWEB_SEND_RATE_PER_MINUTE = env_int("AGENTWEB_SEND_RATE_PER_MINUTE", 30)
# Chat sockets one person may hold open in one process (chat/socket_cap.py); one more is closed with 4429. 0: no cap.
AGENTWEB_MAX_SOCKETS_PER_USER = env_int("AGENTWEB_MAX_SOCKETS_PER_USER", 30)
# The run API's event streams (api/run_events.py) count among them.
# The API (docs/api.md): an event stream's keep-alive comment after this many seconds without an event (it keeps
# proxies from closing the stream and finds a client that left); how long a chat completion holds its response while
# a tool call waits for approval (the run itself waits on); the most messages one completion request may carry.
AGENTWEB_SSE_KEEPALIVE = env_float("AGENTWEB_SSE_KEEPALIVE", 15.0)
AGENTWEB_API_APPROVAL_TIMEOUT = env_float("AGENTWEB_API_APPROVAL_TIMEOUT", 300.0)
AGENTWEB_API_MAX_MESSAGES = env_int("AGENTWEB_API_MAX_MESSAGES", 500)

# --- issue 39, webhook triggers (hooks/, docs/background.md) ---
# A delivery's body (POST /hooks/<id>): a body over it gets 413 before it is read (agentweb/request_limits.py).
AGENTWEB_HOOK_MAX_BODY_BYTES = env_int("AGENTWEB_HOOK_MAX_BODY_BYTES", 256 * 1024)
# Deliveries one trigger takes per minute (after a burst of AGENTWEB_HOOK_BURST; 0: as many as per minute), across
# processes when they share Redis (hooks/limits.py); one more is answered 429.
AGENTWEB_HOOK_RATE_PER_MINUTE = env_int("AGENTWEB_HOOK_RATE_PER_MINUTE", 30)
AGENTWEB_HOOK_BURST = env_int("AGENTWEB_HOOK_BURST", 0)

# MCP servers as tool sources (docs/mcp.md): a JSON file in the mcpServers format, read at start; and the share of
# the smallest model context window the MCP tools' definitions may take before the admin warns.
AGENTWEB_MCP_CONFIG = env_str("AGENTWEB_MCP_CONFIG")
AGENTWEB_MCP_CONTEXT_SHARE = env_float("AGENTWEB_MCP_CONTEXT_SHARE", 0.25)

# --- attachments (docs/deploy.md, "Attachments") ---
# Uploads go to Django's default storage: this folder unless a deployment configures STORAGES["default"]
# (an S3 bucket, …). Never served from here directly: attachments/views.py checks the owner.
MEDIA_ROOT = Path(env_str("AGENTWEB_MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "/media/"  # unused: no view serves MEDIA_ROOT as it is
# One file's limit, a person's total (sent and unsent), the characters of a text or PDF file the model reads,
# and the hours an unsent upload is kept (removed when its owner uploads again, or by `manage.py attachments
# cleanup`).
AGENTWEB_ATTACHMENT_MAX_BYTES = env_int("AGENTWEB_ATTACHMENT_MAX_BYTES", 10 * 1024 * 1024)
AGENTWEB_ATTACHMENT_QUOTA_BYTES = env_int("AGENTWEB_ATTACHMENT_QUOTA_BYTES", 200 * 1024 * 1024)
AGENTWEB_ATTACHMENT_TEXT_CHARS = env_int("AGENTWEB_ATTACHMENT_TEXT_CHARS", 20_000)
AGENTWEB_ATTACHMENT_UNSENT_HOURS = env_int("AGENTWEB_ATTACHMENT_UNSENT_HOURS", 24)
# A PDF's text is read in a process of its own (attachments/pdf_reader.py): killed after this many seconds of CPU
# (or twice as many of wall-clock time) or past this much memory, the PDF then refused as unreadable; at most
# AGENTWEB_PDF_READERS such processes at once per server process (a PDF beyond them is refused, to be sent again).
AGENTWEB_PDF_READ_SECONDS = env_int("AGENTWEB_PDF_READ_SECONDS", 15)
AGENTWEB_PDF_MEMORY_BYTES = env_int("AGENTWEB_PDF_MEMORY_BYTES", 512 * 1024 * 1024)
AGENTWEB_PDF_READERS = env_int("AGENTWEB_PDF_READERS", 2)

# --- notifications (issue 39 item 4; docs/background.md) ---
# Email: Django's own settings, from the environment. Without EMAIL_HOST nothing is sent by email (the console
# backend prints it to the log instead, which is what a fresh clone wants).
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "agentweb@localhost")
# The address the notifications' links start with (an email needs a whole URL); the links need a signed-in session.
AGENTWEB_PUBLIC_URL = env_str("AGENTWEB_PUBLIC_URL", "http://localhost:8000").rstrip("/")
# Events of one person within this many seconds go out as one notification per channel ("50 calls wait").
AGENTWEB_NOTIFY_WINDOW = env_float("AGENTWEB_NOTIFY_WINDOW", 5.0)
# Hosts a webhook or push endpoint may be on although the SSRF guard (tools/net.py) would refuse their address.
AGENTWEB_NOTIFY_ALLOWED_HOSTS = env_list("AGENTWEB_NOTIFY_ALLOWED_HOSTS", [])
# An outgoing webhook that answers 5xx or is not reached is tried again, this many attempts in all, waiting this
# many seconds before the second and twice as long before each next (notifications/dispatch.py).
AGENTWEB_NOTIFY_WEBHOOK_ATTEMPTS = env_int("AGENTWEB_NOTIFY_WEBHOOK_ATTEMPTS", 4)
AGENTWEB_NOTIFY_WEBHOOK_BACKOFF = env_float("AGENTWEB_NOTIFY_WEBHOOK_BACKOFF", 2.0)
# Web Push's VAPID key: a P-256 private key in PEM. Without AGENTWEB_VAPID_PRIVATE_KEY, one is made on first use and
# kept in this git-ignored file (like the secret key); a deployment on several machines sets the variable.
AGENTWEB_VAPID_PRIVATE_KEY = env_str("AGENTWEB_VAPID_PRIVATE_KEY")
AGENTWEB_VAPID_KEY_FILE = Path(env_str("AGENTWEB_VAPID_KEY_FILE") or BASE_DIR / ".vapid_key")
AGENTWEB_VAPID_SUBJECT = env_str("AGENTWEB_VAPID_SUBJECT", f"mailto:{DEFAULT_FROM_EMAIL}")
# Schedules (issue 39, docs/background.md): how often the process that fires them (the run workers with
# AGENTWEB_RUN_WORKERS, else each Daphne process) looks for due ones at most (sooner when one is due before then), and
# how long a firing may stay claimed with no run started before another process starts it (its process died).
AGENTWEB_SCHEDULE_TICK = env_float("AGENTWEB_SCHEDULE_TICK", 5.0)
AGENTWEB_SCHEDULE_CLAIM_STALE_SECONDS = env_float("AGENTWEB_SCHEDULE_CLAIM_STALE_SECONDS", 60.0)

# --- the audit log (issue 40; docs/teams.md, "Audit log") ---
# Events older than this many days are removed (by `manage.py audit prune`, and hourly by the processes that fire
# schedules); 0 keeps them forever.
AGENTWEB_AUDIT_RETENTION_DAYS = env_int("AGENTWEB_AUDIT_RETENTION_DAYS", 365)
# A run worker lowers its own CPU priority by this much as it starts (os.nice; docs/deploy.md): on machines where
# workers and Daphne processes share cores, a burst of runs (1,000 schedules a minute) then slows pages far less
# (page p99 +16 ms over idle instead of +48 on 2 cores: docs/performance.md). A worker alone on its cores is not
# slowed by it. 0: unchanged.
AGENTWEB_WORKER_NICE = env_int("AGENTWEB_WORKER_NICE", 10)
