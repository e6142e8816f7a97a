"""The judges' concurrency limit across every process: at most JUDGE_CONCURRENCY requests in
flight to one judge's server, counted in Redis (the broker's), however many workers grade.

A slot is a member of a sorted set per endpoint, scored by when it was taken (Redis's own
clock, so that machines whose clocks differ agree). Taking one is one Lua script: drop the
slots older than the longest a request can take, then take one if fewer than the limit are
held. A worker killed with `kill -9` mid-request leaves its slot behind; it is dropped when
it grows that old, so a dead worker narrows the limit for a minute or two, never for good.
Without a Redis broker the judges count in their own process (`LocalSlots`).
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

from context_verifiers.slots import SlotsUnavailable

logger = logging.getLogger(__name__)

# KEYS[1]: the endpoint's set; ARGV: the slot's token, the limit, how long a slot may be held
# (ms). 1 when the slot is taken, 0 when all are held.
_TAKE = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local hold = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms - hold)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ms, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], hold)
  return 1
end
return 0
"""

# While every slot is held: ask again after 2 ms, doubling up to 50 ms (a judge's reply takes
# tens of milliseconds at the least), each a little shorter at random so waiters spread out.
FIRST_PAUSE_SECONDS = 0.002
MOST_PAUSE_SECONDS = 0.05

UNAVAILABLE = "The judges' concurrency limit is counted in Redis, which did not answer ({error})."

_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def _client(url: str) -> redis.Redis:
    # One client (and its connection pool, which is thread-safe) per process and URL.
    with _clients_lock:
        if url not in _clients:
            _clients[url] = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        return _clients[url]


def slot_key(endpoint: str) -> str:
    return "judge-slots:" + hashlib.sha256(endpoint.encode()).hexdigest()[:24]


class RedisSlots:
    """The `Slots` of one endpoint, `limit` at once across every process using `url`. A slot
    is held at most `hold_seconds`: past that it counts as a dead holder's, and is freed."""

    def __init__(self, *, url: str, endpoint: str, limit: int, hold_seconds: float) -> None:
        self.limit = limit
        self.key = slot_key(endpoint)
        self.hold_ms = max(1, int(hold_seconds * 1000))
        self.client = _client(url)
        self._take: Any = self.client.register_script(_TAKE)

    @contextmanager
    def hold(self) -> Iterator[None]:
        token = uuid.uuid4().hex
        pause = FIRST_PAUSE_SECONDS
        try:
            while not self._take(keys=[self.key], args=[token, self.limit, self.hold_ms]):
                time.sleep(pause * (1 - 0.25 * random.random()))
                pause = min(pause * 2, MOST_PAUSE_SECONDS)
        except redis.RedisError as exc:
            raise SlotsUnavailable(UNAVAILABLE.format(error=exc)) from exc
        try:
            yield
        finally:
            try:
                self.client.zrem(self.key, token)
            except redis.RedisError:
                logger.warning("A judge slot could not be given back; it expires by itself")
