"""The nginx front's configuration (contextevals/front.py) holds Django's rule for bodies."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from django.urls import reverse

from contextevals import front

UPLOADS = [
    ("datasets_app:import_check", [7]),
    ("datasets_app:dataset_create", []),
    ("datasets_app:dataset_create_check", []),
]


def test_the_paths_that_take_a_file_are_the_views_marked_so():
    regexes = front.upload_paths()
    for name, args in UPLOADS:
        assert any(re.match(regex, reverse(name, args=args)) for regex in regexes), name
    for path in ("/accounts/login/", "/admin/login/", "/datasets/7/settings/", "/"):
        assert not any(re.match(regex, path) for regex in regexes), path


def test_the_configuration_is_valid_nginx_with_each_limit(tmp_path, settings):
    config = front.nginx_config(
        listen="127.0.0.1:8123", upstream=f"unix:{tmp_path}/g.sock", prefix=str(tmp_path)
    )
    assert f"client_max_body_size {settings.DATA_UPLOAD_MAX_MEMORY_SIZE};" in config
    upload_limit = settings.MAX_UPLOAD_BYTES + front.MULTIPART_SLACK_BYTES
    assert config.count(f"client_max_body_size {upload_limit};") == len(front.upload_paths())
    nginx = shutil.which("nginx") or shutil.which("/usr/sbin/nginx")
    if nginx is None:
        pytest.fail("nginx is not installed; run `make test`, which installs it.")
    (tmp_path / "nginx.conf").write_text(config)
    result = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-e", "stderr"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
