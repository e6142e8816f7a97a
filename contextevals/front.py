"""The nginx configuration of the web process's front (scripts/web.py), from the settings
and the URLs, so that nginx and Django hold one rule.

Why a front at all: a gunicorn thread reads a request's headers and body itself, so a
client that sends them a byte at a time holds that thread; eight such clients held every
thread of 2 workers x 4 threads, and a normal GET waited 28 s (docs/reliability.md has the
figures). nginx reads every request whole, with time limits, before gunicorn sees it, and
refuses a body over the size its path takes before reading it: the views that take a file
(marked `accepts_upload`) MAX_UPLOAD_BYTES, every other path DATA_UPLOAD_MAX_MEMORY_SIZE.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver

from datasets_app.redaction import API_TOKEN_PREFIX

# What a multipart body adds to the file it carries (boundaries, part headers, the CSRF
# token and the form's few fields).
MULTIPART_SLACK_BYTES = 64 * 1024

TEMPLATE = """\
# Written by contextevals/front.py for scripts/web.py; not edited by hand.
worker_processes 1;
pid {prefix}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 1024; }}

http {{
    # Method and path only: a query string (?token=…) or the user name of Basic auth may be
    # a token sent the wrong way, and nginx's own format ($request, $remote_user) prints both;
    # a token in the path is redacted.
    map $uri $logged_uri {{
        "~^(?<before>.*){token_prefix}[A-Za-z0-9_%-]+(?<after>.*)$"
            "${{before}}{token_prefix}[redacted]${{after}}";
        default $uri;
    }}
    log_format redacted '$remote_addr - - [$time_local] '
                        '"$request_method $logged_uri $server_protocol" '
                        '$status $body_bytes_sent $request_time "$http_user_agent"';
    access_log {access_log};
    server_tokens off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;

    # A slow client waits here, never in a gunicorn thread: its headers must arrive within
    # 10 s and its body keep coming (each read within 30 s); nginx then hands gunicorn the
    # whole request at once, and takes the answer whole for a slow reader.
    client_header_timeout 10s;
    client_body_timeout 30s;
    send_timeout 30s;
    keepalive_timeout 30s;
    large_client_header_buffers 4 16k;
    client_body_buffer_size 1m;
    proxy_request_buffering on;
    proxy_buffering on;
    client_max_body_size {form_bytes};

    # The scheme the TLS proxy in front saw, else ours.
    map $http_x_forwarded_proto $forwarded_proto {{
        default $http_x_forwarded_proto;
        "" $scheme;
    }}

    upstream app {{
        server {upstream} fail_timeout=0;
    }}

    server {{
        listen {listen};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $forwarded_proto;
        proxy_redirect off;
        proxy_read_timeout 120s;

        location / {{
            proxy_pass http://app;
        }}
{upload_locations}    }}
}}
"""

# A view that takes a file: its own body limit.
UPLOAD_LOCATION = """
        location ~ {regex} {{
            client_max_body_size {upload_bytes};
            proxy_pass http://app;
        }}
"""


def upload_paths() -> list[str]:
    """The paths of the views that take a file, as anchored regular expressions."""
    return sorted(set(_upload_paths(get_resolver().url_patterns, "")))


def _upload_paths(patterns, prefix: str) -> Iterator[str]:
    for pattern in patterns:
        regex = prefix + _bare(pattern.pattern.regex.pattern)
        if isinstance(pattern, URLResolver):
            yield from _upload_paths(pattern.url_patterns, regex)
        elif isinstance(pattern, URLPattern) and getattr(pattern.callback, "accepts_upload", False):
            yield f"^/{regex}$"


def _bare(regex: str) -> str:
    # Django anchors each part (^...\\Z) and names its groups; nginx's regex joins the
    # parts and needs no names (two parts may use the same one).
    regex = regex.removeprefix("^").removesuffix(r"\Z").removesuffix("$")
    return re.sub(r"\(\?P<\w+>", "(?:", regex)


def nginx_config(*, listen: str, upstream: str, prefix: str, access_log: str = "off") -> str:
    """nginx.conf for a front listening on `listen` before gunicorn at `upstream`."""
    locations = "".join(
        UPLOAD_LOCATION.format(
            regex=_quoted(regex), upload_bytes=settings.MAX_UPLOAD_BYTES + MULTIPART_SLACK_BYTES
        )
        for regex in upload_paths()
    )
    return TEMPLATE.format(
        prefix=prefix,
        token_prefix=API_TOKEN_PREFIX,
        listen=listen,
        upstream=upstream,
        access_log=access_log if access_log == "off" else f"{access_log} redacted",
        form_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        upload_locations=locations,
    )


def _quoted(regex: str) -> str:
    return '"' + regex.replace("\\", "\\\\").replace('"', '\\"') + '"'
