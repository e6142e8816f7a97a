"""gunicorn's settings (it reads this file from the working directory).

The Procfile's web process (scripts/web.py) runs gunicorn behind nginx, on a Unix socket:
gunicorn's threads read each request themselves, so a client sending slowly would hold one.

Threads: a dialog polls its check or import every second and an upload can be slow to
arrive, so each worker process serves several requests at once; a short check then no
longer waits in line behind a long import. Processes: WEB_CONCURRENCY, two by default, one
per core of the machines this runs on.
"""

import os

wsgi_app = "contextevals.wsgi"
bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = 60
# A worker's memory can creep with long-lived big uploads; recycle now and then.
max_requests = 2000
max_requests_jitter = 200
accesslog = os.environ.get("GUNICORN_ACCESSLOG") or None  # "-" for stdout
# When on, it never prints a token a client sent in the URL (?token=…) or as the user name
# of Basic auth: its lines pass through the app's redaction (contextevals/access_log.py).
logger_class = "contextevals.access_log.RedactingLogger"
