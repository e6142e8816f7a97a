"""A real HTTP server on 127.0.0.1 that speaks OpenAI's `/v1/chat/completions`, for the
judges' tests and bench: no mocked transport, the real SDK over a real socket.

Its "model" is a few deterministic rules on the answer it finds in the request's fence
labelled `answer`: an answer containing "correct" passes (score 1, category C), one
containing "partly" scores 0.5 (category A), anything else fails (0, category D). It
replies in whichever way the request asks (JSON schema, a forced tool call, JSON in the
text). Faults are queued with `fail(...)` and used one per request, in order: an HTTP
status with headers (429 with Retry-After, 500), a slow reply, a body that is not JSON, a
reply with given content (a score of 7). Every request is kept in `requests` (its headers
in `headers`, names in lower case), and `most_in_flight` counts the most it answered at once.

Run alone (`python tests/verifiers/judge_server.py --latency 0.02`) it prints its base URL
and serves until killed: the bench runs it so, in its own process.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ANSWER = re.compile(r"(`{3,})answer\n(.*?)\n\1(?!`)", re.DOTALL)
_ASKED = re.compile(r'then "(passed|score|category)"')


@dataclass
class Fault:
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: bytes | None = None
    content: str | None = None
    message: str | None = None


def verdict_for(answer: str, asked: str) -> dict[str, Any]:
    """The rules of this server's "model"."""
    if "correct" in answer:
        points, category, reasoning = 1.0, "C", "The answer is correct."
    elif "partly" in answer:
        points, category, reasoning = 0.5, "A", "The answer is partly there."
    else:
        points, category, reasoning = 0.0, "D", "The answer does not do it."
    value: Any = {"passed": points == 1.0, "score": points, "category": category}[asked]
    return {"reasoning": reasoning, asked: value}


def _completion(body: dict[str, Any], verdict_text: str, tool: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": verdict_text}
    if tool:
        name = body["tools"][0]["function"]["name"]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": name, "arguments": verdict_text},
                }
            ],
        }
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool else "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


class JudgeServer:
    """The server, started on a free port; `base_url` ends in /v1 as the SDK expects."""

    def __init__(self, *, latency: float = 0.0) -> None:
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.faults: deque[Fault] = deque()
        # Each request's HTTP headers (the key arrives as Authorization), and the most
        # requests it was answering at once.
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go in one write, at once: with Nagle's algorithm, the body
            # waited for the client's delayed ACK of the headers (40 ms a reply on Linux).
            disable_nagle_algorithm = True
            wbufsize = -1

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                with server._lock:
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                try:
                    status, headers, reply = server.answer(self.path, raw)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> JudgeServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail(self, *faults: Fault) -> None:
        """Queue faults for the next requests, one each."""
        with self._lock:
            self.faults.extend(faults)

    def answer(self, path: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        body = json.loads(raw)
        with self._lock:
            self.requests.append(body)
            fault = self.faults.popleft() if self.faults else Fault()
        time.sleep(self.latency + fault.delay)
        if path != "/v1/chat/completions":
            return 404, {}, b'{"error": {"message": "not found"}}'
        if fault.status is not None:
            message = fault.message or f"fault {fault.status}"
            error = json.dumps({"error": {"message": message}}).encode()
            return fault.status, fault.headers, error
        if fault.body is not None:
            return 200, {}, fault.body
        prompt = "\n".join(m.get("content") or "" for m in body["messages"] if m["role"] == "user")
        found = _ANSWER.search(prompt)
        asked = _ASKED.findall(prompt)
        verdict = verdict_for(found.group(2) if found else "", asked[-1] if asked else "passed")
        text = fault.content if fault.content is not None else json.dumps(verdict)
        if "response_format" not in body and "tools" not in body and fault.content is None:
            text = f"Here is my verdict:\n{text}\nThat is all."
        reply = _completion(body, text, tool="tools" in body)
        return 200, {}, json.dumps(reply).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    server = JudgeServer(latency=args.latency)
    print(server.base_url, flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()
