"""A scripted OpenAI-compatible chat-completions server on loopback, for the judge tests.

The server answers ``POST /v1/chat/completions`` from a script keyed by a
*directive* written in the prompt as ``[[name]]`` (the tests put it in the
target text), the request's ``seed`` and how many times that (directive,
seed) pair has been asked.  Every request is logged (arrival time,
directive, seed, attempt, what was answered), so tests can count requests,
retries and repeats.

Run as a script (``python _judge_server.py``) it serves until killed and
prints its URL on the first line (used by the CLI test).
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIRECTIVE = re.compile(r"\[\[(\w+)\]\]")


def _completion(content, logprobs=None):
    choice = {"index": 0, "message": {"role": "assistant", "content": content},
              "finish_reason": "stop", "logprobs": None}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0,
            "model": "scripted", "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def _tok(token, p, alts=()):
    return {"token": token, "logprob": math.log(p), "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": math.log(q), "bytes": list(t.encode())}
                             for t, q in alts]}


#: G-Eval fixture: the answer "Rating: 4" with the alternatives of " 4" (probabilities).
GEVAL_ALTS = [(" 4", 0.5), (" 3", 0.3), (" 5", 0.1), (" six", 0.05), ("4", 0.05)]


def script(directive, seed, attempt, content=""):
    """``(kind, payload)``: ``("ok", body)``, ``("status", (code, text, headers))``,
    ``("hang", seconds_then_body)``, ``("raw", text)``."""
    fixed = {
        "good": "The summary is coherent and concise.\nRating: 4",
        "bold": "Some issues with ordering.\n**Rating:** 5",
        "slash": "Analysis: acceptable.\nRating: 3/5",
        "malformed": "I cannot evaluate this text.",
        "words": "Rating: four",
        "oos": "Rating: 7",
        "zero": "Rating: 0",
        "decimal": "Rating: 3.5",
    }
    if directive in fixed:
        return "ok", _completion(fixed[directive])
    if directive == "vary":
        return "ok", _completion(f"Analysis.\nRating: {1 + seed % 5}")
    if directive == "r429":
        if attempt == 1:
            return "status", (429, '{"error": {"message": "rate limited"}}', {"Retry-After": "0"})
        return "ok", _completion("Rating: 2")
    if directive == "r500":
        if attempt <= 2:
            return "status", (500, '{"error": {"message": "internal"}}', {})
        return "ok", _completion("Rating: 1")
    if directive == "hang":
        if attempt == 1:
            return "hang", _completion("Rating: 5")
        return "ok", _completion("Rating: 5")
    if directive == "notjson":
        if attempt == 1:
            return "raw", "<html>upstream error</html>"
        return "ok", _completion("Rating: 3")
    if directive == "r408":  # a 4xx other than 429: never retried
        return "status", (408, '{"error": {"message": "request timeout"}}', {})
    if directive == "wait2":  # 429 asking for 2 s (delta-seconds), then an answer
        if attempt == 1:
            return "status", (429, '{"error": {"message": "slow down"}}', {"Retry-After": "2"})
        return "ok", _completion("Rating: 2")
    if directive == "wait90":  # 429 asking for more than the tests' max_backoff
        return "status", (429, '{"error": {"message": "slow down"}}', {"Retry-After": "90"})
    if directive == "waitdate":  # 429 with an HTTP-date Retry-After 30 s ahead
        if attempt == 1:
            when = email.utils.formatdate(time.time() + 30, usegmt=True)
            return "status", (429, '{"error": {"message": "slow down"}}', {"Retry-After": when})
        return "ok", _completion("Rating: 2")
    if directive == "pair":  # pairwise: prefer the output with the higher quality:N
        q = [int(v) for v in re.findall(r"quality:(\d+)", content)]
        if len(q) != 2:
            return "ok", _completion("I cannot compare these.")
        verdict = "A" if q[0] > q[1] else "B" if q[0] < q[1] else "tie"
        return "ok", _completion(f"Both are fine.\nPreference: {verdict}")
    if directive == "pairbias":  # pairwise with total position bias: always the first output
        return "ok", _completion("The first one reads better.\n**Preference:** A")
    if directive == "always500":
        return "status", (500, '{"error": {"message": "down"}}', {})
    if directive == "badreq":
        return "status", (400, '{"error": {"message": "bad request"}}', {})
    if directive == "geval":
        return "ok", _completion("Rating: 4", [_tok("Rating", 0.9), _tok(":", 0.99),
                                               _tok(" 4", 0.5, GEVAL_ALTS)])
    if directive == "geval100":  # "100" split over two tokens
        return "ok", _completion("Rating: 100", [_tok("Rating", 0.9), _tok(":", 0.99),
                                                 _tok(" 10", 0.4, [(" 10", 0.4), (" 9", 0.3)]),
                                                 _tok("0", 0.8, [("0", 0.8)])])
    return "ok", _completion(f"Unknown directive {directive!r}.")


class ScriptedServer:
    """``with ScriptedServer() as srv: ... srv.url ... srv.log``."""

    def __init__(self, *, delay=0.0, hang=1.5, api_key=None):
        self.delay = delay
        self.hang = hang
        self.api_key = api_key
        self.log: list[dict] = []
        self.attempts: dict = defaultdict(int)
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, code, text, headers=None):
                data = text.encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                auth = self.headers.get("Authorization")
                content = body["messages"][-1]["content"]
                m = DIRECTIVE.search(content)
                directive = m.group(1) if m else None
                seed = body.get("seed")
                with server.lock:
                    server.attempts[(content, seed)] += 1
                    attempt = server.attempts[(content, seed)]
                    entry = {"t": time.monotonic(), "directive": directive, "seed": seed,
                             "attempt": attempt, "prompt": content, "body": body,
                             "auth": auth, "headers": {k.lower(): v for k, v in self.headers.items()}}
                    server.log.append(entry)
                if self.path != "/v1/chat/completions":
                    entry["sent"] = 404
                    return self._send(404, '{"error": "no such route"}')
                if directive == "auth" or (server.api_key and auth != f"Bearer {server.api_key}"):
                    entry["sent"] = 401
                    return self._send(401, json.dumps(
                        {"error": {"message": f"Incorrect API key provided: {auth}"}}))
                kind, payload = script(directive, seed if seed is not None else 0, attempt, content)
                if kind == "status":
                    code, text, headers = payload
                    entry["sent"] = code
                    return self._send(code, text, headers)
                if kind == "hang":
                    entry["sent"] = "hang"
                    time.sleep(server.hang)
                    return self._send(200, json.dumps(payload))
                if kind == "raw":
                    entry["sent"] = "raw"
                    return self._send(200, payload)
                if server.delay:
                    time.sleep(server.delay)
                entry["sent"] = 200
                entry["content"] = payload["choices"][0]["message"]["content"]
                return self._send(200, json.dumps(payload))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def requests(self, directive=None):
        with self.lock:
            return [e for e in self.log if directive is None or e["directive"] == directive]


class RecordingServer:
    """A loopback HTTP server whose every answer comes from ``respond(handler, entry)``.

    It answers GET and POST, logs each request (method, path, headers, body)
    in :attr:`log`, and lets a test script redirects, oversized bodies or a
    response trickled one byte at a time.
    """

    def __init__(self, respond):
        self.log: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length", 0) or 0)
                body = self.rfile.read(length) if length else b""
                entry = {"t": time.monotonic(), "method": self.command, "path": self.path,
                         "headers": {k.lower(): v for k, v in self.headers.items()},
                         "body": body}
                with server.lock:
                    server.log.append(entry)
                try:
                    respond(self, entry)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

            do_GET = do_POST = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def send(handler, code, text, headers=None, *, length=True):
    """Write one response (``length=False``: no Content-Length, the body ends at close)."""
    data = text.encode() if isinstance(text, str) else text
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    if length:
        handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


def completion_json(content):
    """A chat-completions response body answering ``content``."""
    return json.dumps(_completion(content))


if __name__ == "__main__":  # pragma: no cover - used by a subprocess test
    with ScriptedServer(delay=0.02) as srv:
        print(srv.url, flush=True)
        threading.Event().wait()
