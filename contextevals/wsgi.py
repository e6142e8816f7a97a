"""WSGI entry point for gunicorn (see the Procfile)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")

application = get_wsgi_application()
