"""A password hasher for the tests: PBKDF2 at one iteration.

The production hasher costs about 0.6 s a password, and the suite makes hundreds of people.
A hash written here is an ordinary `pbkdf2_sha256$1$…` hash: the iteration count is part of
the hash, so a separate server process started with the production settings (the deploy
tests) still checks these passwords, which an MD5 hasher's would not allow.
"""

from __future__ import annotations

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class OneIterationPBKDF2(PBKDF2PasswordHasher):
    iterations = 1
