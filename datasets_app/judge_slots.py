"""The judges' concurrency limit across every process: at most JUDGE_CONCURRENCY requests in
flight to one judge's server, counted in Redis (the broker's), however many workers grade.

A slot is a member of a sorted set per endpoint, scored by when it was taken (Redis's own
clock, so that machines whose clocks differ agree). Taking one is one Lua script: drop the
slots older than the longest a request can take, then take one if fewer than the limit are
held. A worker killed with `kill -9` mid-request leaves its slot behind; it is dropped when
it grows that old, so a dead worker narrows the limit for a minute or two, never for good.
Without a Redis broker the judges count in their own process (`LocalSlots`).

While every slot is held, a request waits for one to be given back, not for a timer: giving
a slot back leaves a word in the endpoint's list of freed slots, which a waiter blocks on
(BLPOP). Waiting by polling left each freed slot idle until a waiter next asked, up to 50 ms
of a 20 ms request, and halved what the limit lets through (the judged run of `make bench`).
"""

from __future__ import annotations

import hashlib
import logging
import threading
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

# KEYS[1]: the endpoint's set, KEYS[2]: its list of freed slots; ARGV: the slot's token, the
# limit, how long a slot may be held (ms). A word in the list for each slot given back, at most
# `limit` of them (a word nobody waited for only costs the next waiter one more try).
_GIVE = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('LPUSH', KEYS[2], 1)
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
end
return 0
"""

# While every slot is held: wait for a slot to be given back, at most this long before asking
# again (a slot freed by growing old, its holder dead, leaves no word in the list).
MOST_WAIT_SECONDS = 0.05

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
        self.freed_key = f"{self.key}:freed"
        self.client = _client(url)
        self._take: Any = self.client.register_script(_TAKE)
        self._give: Any = self.client.register_script(_GIVE)

    @contextmanager
    def hold(self) -> Iterator[None]:
        token = uuid.uuid4().hex
        args = [token, self.limit, self.hold_ms]
        try:
            while not self._take(keys=[self.key], args=args):
                self.client.blpop([self.freed_key], timeout=MOST_WAIT_SECONDS)
        except redis.RedisError as exc:
            raise SlotsUnavailable(UNAVAILABLE.format(error=exc)) from exc
        try:
            yield
        finally:
            try:
                self._give(keys=[self.key, self.freed_key], args=args)
            except redis.RedisError:
                logger.warning("A judge slot could not be given back; it expires by itself")
