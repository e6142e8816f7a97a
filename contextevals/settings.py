"""Settings, all from environment variables with safe local defaults.

With nothing set, the app runs on SQLite, local media storage and eager Celery, with DEBUG
on. DATABASE_URL, CELERY_BROKER_URL, STORAGE_BUCKET (S3-compatible), SECRET_KEY,
ALLOWED_HOSTS and DEBUG=0 switch it to production services; no setting needs a file edit.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key

from context_verifiers.judges import JudgeConfig, JudgeConfigError

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def local_secret_key(path: Path) -> str:
    """The key in a file only its owner can read (0600), made on first use."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        path.chmod(0o600)  # a key file written by an older version was left world-readable
    else:
        with os.fdopen(descriptor, "w") as key_file:
            key_file.write(get_random_secret_key())
    return path.read_text().strip()


DEBUG = env_bool("DEBUG", True)

# A local run gets a key that lives in a git-ignored file, so sessions survive a restart;
# production must set SECRET_KEY.
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("SECRET_KEY must be set when DEBUG=0.")
    SECRET_KEY = local_secret_key(BASE_DIR / ".local-secret-key")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "csp",
    "django_ratelimit",
    "axes",
    # django-ninja's own templates and static files: the API docs page, served from here.
    "ninja",
    "datasets_app",
]

MIDDLEWARE = [
    # First, so that every answer carries them: a 400 for a bad Host and the 301 to https
    # are made by the middleware below and pass back through these two.
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # With DEBUG=0: static files, compressed and under hashed names, straight from this
    # process (with DEBUG on, runserver serves them itself; see below).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before anything reads a body (CsrfViewMiddleware does): refuses one too large by the
    # size it declares, and a chunked one that declares none.
    "datasets_app.middleware.BodyLimitMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every page needs a login; the login page itself and static files are the exceptions.
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: turns a locked-out login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

if DEBUG:
    # runserver serves static files from the apps' folders; whitenoise would only warn that
    # nothing was collected.
    MIDDLEWARE.remove("whitenoise.middleware.WhiteNoiseMiddleware")

ROOT_URLCONF = "contextevals.urls"

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
            ],
        },
    },
]

WSGI_APPLICATION = "contextevals.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's SQLite backend, flushing past the held-row triggers (contextevals/sqlite3).
    DATABASES["default"]["ENGINE"] = "contextevals.sqlite3"
    # Tests on SQLite run in memory, as they would under Django's own engine name (which
    # test runners such as pytest-django recognise by that name alone).
    DATABASES["default"]["TEST"] = {"NAME": ":memory:"}
    # Concurrent requests on SQLite wait for the write lock instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    # A transaction takes the write lock when it begins: two that read and then write (an
    # import and its worker's heartbeat) would otherwise deadlock, and SQLite fails one at
    # once with "database is locked" instead of letting it wait.
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    DATABASES["default"]["CONN_MAX_AGE"] = 0
elif os.environ.get("TEST_DATABASE_NAME"):
    # Two checkouts testing on one PostgreSQL at once each need a test database of their own.
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    # Not a rule: told of every saved password, it revokes the person's API tokens.
    {"NAME": "datasets_app.passwords.ApiTokensRevokedOnChange"},
]

# Login throttling (django-axes), on the app's and the admin's login pages alike. Failures
# are counted per client address, whatever user names are tried, so one address cannot guess
# at many accounts, and nobody elsewhere can lock a person out of their own account. Ten
# failures, each within 15 minutes of the one before (a person mistyping, even an office
# behind one address, stays well under), pause logging in from that address for 15 minutes,
# restarted by each try during the pause. A successful login does not clear the count:
# else anyone with an account could log in between guesses at someone else's. An
# administrator lifts a pause in the admin (Axes > Access attempts) or with
# `manage.py axes_reset`.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_LOCKOUT_PARAMETERS = ["ip_address"]
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LOGIN_PAUSE_MINUTES", "15")))
AXES_RESET_ON_SUCCESS = False
AXES_LOCKOUT_CALLABLE = "datasets_app.login_throttle.lockout_response"
AXES_CLIENT_IP_CALLABLE = "datasets_app.login_throttle.client_ip"
AXES_VERBOSE = False  # its start-up line would precede every management command's output
# How many proxies in front append to X-Forwarded-For (scripts/web's nginx is one). With 0,
# the header is ignored: a client could write any address there.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))

# Email (password reset): SMTP from the usual settings. With no EMAIL_HOST nothing could
# send the reset link, so the reset pages are not served and the login page offers none.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", not env_bool("EMAIL_USE_SSL", False))
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Context Evals <noreply@localhost>")
PASSWORD_RESET_ENABLED = bool(EMAIL_HOST)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "datasets_app:dataset_list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
MEDIA_URL = "media/"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))

# What one person's datasets may keep in the storage: the attached files of their tasks,
# each content counted once (identical files are stored once, whoever imports them). Five
# of the largest zips an import takes (2 GiB unzipped each); without a bound one account
# importing 2,000 files of 1 MiB of zeros twenty times a minute wrote 36 GiB a minute.
STORAGE_QUOTA_BYTES = int(os.environ.get("STORAGE_QUOTA_BYTES", str(10 * 1024**3)))

# Files: local media by default; S3-compatible object storage when a bucket is named.
STORAGE_BUCKET = os.environ.get("STORAGE_BUCKET", "")
if STORAGE_BUCKET:
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": STORAGE_BUCKET,
            "endpoint_url": os.environ.get("STORAGE_ENDPOINT_URL") or None,
            "region_name": os.environ.get("STORAGE_REGION") or None,
            "access_key": os.environ.get("STORAGE_ACCESS_KEY_ID") or None,
            "secret_key": os.environ.get("STORAGE_SECRET_ACCESS_KEY") or None,
            "default_acl": "private",
            "querystring_auth": True,
            "file_overwrite": False,
            # An opened object spools to a temporary file past 2 MiB instead of being held
            # whole in memory (django-storages' default, 0, never spools).
            "max_memory_size": 2 * 1024 * 1024,
        },
    }
else:
    _default_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
STORAGES = {
    "default": _default_storage,
    # With DEBUG=0, `collectstatic` writes each file under a hashed name, gzip-compressed
    # beside it, and whitenoise serves them with a cache lifetime of a year; a local run
    # (and the tests) use the files as they are.
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Uploads: a dataset .zip may carry 1,000 tasks with files; anything over this is refused
# before it is read whole. Bodies above the memory limit spool to a temporary file.
MAX_UPLOAD_BYTES = int(os.environ.get("MAX_UPLOAD_BYTES", str(512 * 1024 * 1024)))
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
# Every other body (a form, the login page): BodyLimitMiddleware refuses a larger one by its
# Content-Length before anything reads it. A task form holds its prompt, answer and
# instructions at their cap (1 Mi characters each, spec.MAX_TEXT_CHARS) and dozens of criteria
# within 10 MiB; a file goes through the import instead. Django reads a form's body into
# memory, so this also bounds what each request holds.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("MAX_FORM_BYTES", str(10 * 1024 * 1024)))
FILE_UPLOAD_HANDLERS = [
    "datasets_app.uploads.LimitedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Forms here have a handful of fields; a task form with criteria stays well below this.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 2000

# Celery: eager in-process unless a broker is configured.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Every task ends: past its soft time limit it gets SoftTimeLimitExceeded and records that
# the file took too long (a problem a person reads, not a dialog checking forever); past the
# hard limit the worker kills the process running it and records the same, acknowledging the
# message, so a hostile file is never handed to the next worker. A check of any file under
# the upload limit takes well under 30 s on a 2-core machine (`make bench`, hostile files);
# 120 s leaves room for a busy worker. An import also stores up to 2 GiB of attached files,
# to object storage perhaps: 15 minutes. The hard limits give 30 s more to write the outcome.
# A task's limits travel in its message as the sender read them: the web process and the
# workers need the same values.
CHECK_TIME_LIMIT_SECONDS = int(os.environ.get("CHECK_TIME_LIMIT_SECONDS", "120"))
IMPORT_TIME_LIMIT_SECONDS = int(os.environ.get("IMPORT_TIME_LIMIT_SECONDS", "900"))
TIME_LIMIT_GRACE_SECONDS = 30
CELERY_TASK_SOFT_TIME_LIMIT = IMPORT_TIME_LIMIT_SECONDS
CELERY_TASK_TIME_LIMIT = IMPORT_TIME_LIMIT_SECONDS + TIME_LIMIT_GRACE_SECONDS
# With Redis, a task a dead worker had taken goes back on the queue after this many
# seconds. Longer than any task can run (the import's hard limit, 930 s: else a slow one is
# handed out twice while it still runs), and otherwise as short as that allows, so that an
# import a crash interrupted resumes within 20 minutes rather than Redis's default hour.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # (at least a minute past the import's hard limit, should IMPORT_TIME_LIMIT_SECONDS rise)
    "visibility_timeout": int(
        os.environ.get("CELERY_VISIBILITY_TIMEOUT", str(max(1200, CELERY_TASK_TIME_LIMIT + 60)))
    ),
}
# A worker checking or importing a file notes on its upload that it is alive this often; a
# dialog (and the API) whose upload has not heard from its worker for this long says the
# worker stopped, until the broker hands the task to another (the visibility timeout above).
UPLOAD_HEARTBEAT_SECONDS = float(os.environ.get("UPLOAD_HEARTBEAT_SECONDS", "10"))
WORKER_STOPPED_AFTER_SECONDS = float(os.environ.get("WORKER_STOPPED_AFTER_SECONDS", "60"))
# A run is graded RUN_CHUNK_TASKS tasks at a time: one claim, one transaction and a handful of
# queries each (`make bench`: at most 25 queries per 100 tasks), small enough that a worker
# killed mid-chunk loses little and a stop takes effect within a chunk (a run none of whose
# checks waits on a judge or the sandbox takes ten times as many: `services.runs.run_chunks`).
# A chunk ends within this, judges' timeouts and retries included (a judge that never answers
# makes errors, not a hang). A worker renews its claims on a chunk's tasks every quarter of
# the lease while it grades, so a claim not renewed for the lease is a dead worker's, and
# another takes it over.
RUN_CHUNK_TASKS = int(os.environ.get("RUN_CHUNK_TASKS", "100"))
RUN_CHUNK_TIME_LIMIT_SECONDS = int(os.environ.get("RUN_CHUNK_TIME_LIMIT_SECONDS", "900"))
RUN_LEASE_SECONDS = float(os.environ.get("RUN_LEASE_SECONDS", "60"))
# Exports: a dataset or version of more tasks than this is built by a worker into the
# storage (an `ExportJob`), its page showing the progress and then a download link, instead
# of within the request: the issue measured 0.6 to 3.7 s per format at 10,000 tasks on a
# 2-core machine, and the time grows with the tasks. One run on a busy 2-core machine
# (10,000 tasks x 5 criteria, PostgreSQL, when this was written) built them on the worker path in
# 1.3 s (eval set) to 23 s (xlsx); 15 minutes leaves xlsx room for some 100,000 tasks on
# such a machine. A built export is kept EXPORT_KEEP_HOURS, then removed by the hourly
# `delete_expired_exports`.
EXPORT_IN_REQUEST_TASKS = int(os.environ.get("EXPORT_IN_REQUEST_TASKS", "10000"))
EXPORT_TIME_LIMIT_SECONDS = int(os.environ.get("EXPORT_TIME_LIMIT_SECONDS", "900"))
EXPORT_KEEP_HOURS = int(os.environ.get("EXPORT_KEEP_HOURS", "24"))
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Workers log through LOGGING below (JSON lines with DEBUG=0), like the web process, instead of
# Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE = {
    "delete-expired-uploads": {
        "task": "datasets_app.tasks.delete_expired_uploads",
        "schedule": 3600.0,
    },
    "delete-expired-exports": {
        "task": "datasets_app.tasks.delete_expired_exports",
        "schedule": 3600.0,
    },
}

CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["CACHE_URL"],
        }
        if os.environ.get("CACHE_URL")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(60 * 60 * 24 * 365)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True

# Content-Security-Policy: only our own scripts and styles, nothing inline, no framing. htmx's
# own inline indicator style is switched off in base.html (our stylesheet has the rule).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    }
}


# Checks and imports per person per minute (django-ratelimit, counted in the cache: set
# CACHE_URL to a shared Redis when several web processes serve the app).
RATELIMIT_CHECKS = os.environ.get("RATELIMIT_CHECKS", "30/m")
RATELIMIT_IMPORTS = os.environ.get("RATELIMIT_IMPORTS", "20/m")
# Making datasets and API tokens, per person per minute: far more than a person clicking,
# few enough that a script in a loop is stopped within the minute.
RATELIMIT_DATASETS = os.environ.get("RATELIMIT_DATASETS", "30/m")
RATELIMIT_TOKENS = os.environ.get("RATELIMIT_TOKENS", "10/m")

# Upper bounds on what one person makes (services/limits.py), generous: a team's whole work
# fits, a runaway script does not. Tasks per dataset: a hundred imports of the largest file
# (1,000 tasks each), while the dataset page and a version's snapshot stay workable.
MAX_API_TOKENS_PER_PERSON = int(os.environ.get("MAX_API_TOKENS_PER_PERSON", "100"))
MAX_DATASETS_PER_PERSON = int(os.environ.get("MAX_DATASETS_PER_PERSON", "1000"))
MAX_TASKS_PER_DATASET = int(os.environ.get("MAX_TASKS_PER_DATASET", "100000"))

# "Try an answer" per person per minute: each try may call the judge once per criterion (or
# run a Python check), so it is bounded like a check.
RATELIMIT_TRIES = os.environ.get("RATELIMIT_TRIES", "30/m")
# django-ratelimit only knows the memcached and django-redis backends; Django's own
# RedisCache increments atomically too, so its "not officially supported" warning is noise.
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"]
if not os.environ.get("CACHE_URL"):
    # One process with its own memory cache counts per process, which is what a single
    # `make run` needs; the README says to set CACHE_URL when several processes serve.
    SILENCED_SYSTEM_CHECKS.append("django_ratelimit.E003")
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Logs go to stderr: as plain text for a person at a terminal (DEBUG), as one JSON object a
# line in production (LOG_FORMAT=json|text to choose).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text" if DEBUG else "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "contextevals.logs.JsonFormatter"},
        "text": {
            "()": "contextevals.logs.TextFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s: %(message)s",
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "text",
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

# Errors reach someone: with SENTRY_DSN set, every unhandled error of a request or a Celery
# task (and each logged error) goes to Sentry, without personal data: no user names,
# cookies or request bodies.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")
if SENTRY_DSN:
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    from datasets_app import redaction

    sentry_sdk.init(
        dsn=SENTRY_DSN,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        environment=os.environ.get("SENTRY_ENVIRONMENT", "production"),
        release=os.environ.get("SENTRY_RELEASE") or None,
        traces_sample_rate=float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "0")),
        send_default_pii=False,
        max_request_body_size="never",
        # A token a client sent in the URL never reaches Sentry either.
        before_send=redaction.sentry_event_redacted,
    )


def judge_config(environ: dict[str, str]) -> JudgeConfig:
    """The judges' server and how they are asked, from JUDGE_* (the README's table). A value
    that cannot be read, or half a judge (a server without a model, or a model without a
    server), stops the start naming the variable, rather than grading without a judge."""
    try:
        config = JudgeConfig.from_env(environ)
    except JudgeConfigError as exc:
        raise ImproperlyConfigured(f"{exc} (see the JUDGE_* settings in the README)") from exc
    if bool(config.base_url) != bool(config.model):
        missing = "JUDGE_MODEL" if config.base_url else "JUDGE_BASE_URL"
        given = "JUDGE_BASE_URL" if config.base_url else "JUDGE_MODEL"
        raise ImproperlyConfigured(
            f"{missing}: must be set too, since {given} is (a judge needs a server and a model)"
        )
    return config


# The judges of llm_judge and agent_judge criteria: JUDGE_BASE_URL, JUDGE_MODEL and the other
# JUDGE_* variables (README, "Judges"). Unset, judge criteria are skipped as "no judge
# configured"; a value that cannot be read stops the start, naming its variable. Read once,
# here: `datasets_app.grading.graders()` makes the site's judge from it.
JUDGE = judge_config(dict(os.environ))
# The judges' concurrency limit, JUDGE_CONCURRENCY requests in flight to the judge's server
# at once, is counted across every process in the broker's Redis; with no Redis broker
# (eager, the command line) each process counts its own.
JUDGE_SLOTS_URL = CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis:", "rediss:")) else ""
# The Celery queue of run chunks that call a judge (the Procfile's `judges` worker): waiting
# on a judge's server, they never hold up the imports and exports on the default queue.
JUDGE_QUEUE = "judges"
