"""`python -m context_verifiers grade ...` (see `context_verifiers.cli`)."""

import sys

from context_verifiers.cli import main

sys.exit(main())
