"""Backends of the LLM judge: an OpenAI-compatible HTTP endpoint and a local causal LM.

A backend turns one request (chat messages and sampling parameters) into one
raw response body: the JSON text of an OpenAI chat-completions response
(``choices[0].message.content``, ``finish_reason`` and, when asked for,
``logprobs.content``).  The local backend writes the same shape, so one
parser reads both.  Backends never see the judge's cache; the judge caches
each body as soon as :meth:`request` returns it.

:class:`OpenAIBackend` speaks the chat-completions protocol over
:mod:`urllib` (standard library only), with a deadline per attempt, a cap on
the response size, no redirects, and retries with exponential backoff and
jitter on HTTP 429, 5xx, time-outs and connection errors.  The API key is
read from an environment variable at each request; it is never stored on the
object, in a cache key, a signature, a log record or an error message.

:class:`LocalBackend` runs a causal LM from a local folder through
``transformers`` (imported when it first answers), with an explicit sampling
loop and per-request seeds, so its answers do not depend on batching or on
the order of requests.
"""

from __future__ import annotations

import base64
import datetime
import email.utils
import http.client
import inspect
import json
import logging
import math
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path

import numpy as np

from ..errors import JudgeRequestError, ParameterError
from ._base import (
    check_choice,
    check_positive_int,
    folder_fingerprint,
    library_version,
    local_model_dir,
    require,
    texts_fingerprint,
)

#: Where the judge logs retries, failures and cache use (:mod:`logging`).
logger = logging.getLogger("metaeval.judge")


@dataclass(frozen=True)
class Reply:
    """A raw response body and how many attempts it took."""

    body: str
    attempts: int = 1


def _check_nonneg(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
            or not math.isfinite(value) or value < 0:
        raise ParameterError(f"{name}={value!r} must be a finite number >= 0")
    return float(value)


def _check_nonneg_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ParameterError(f"{name}={value!r} must be an int >= 0")
    return int(value)


class JudgeBackend:
    """Base class of the judge backends.

    Subclasses set :attr:`kind` and :attr:`concurrency`, describe themselves
    in :meth:`identity` (what enters the cache key: no secrets) and
    :meth:`signature_fields`, choose the parameters they use in
    :meth:`request_params`, and answer in :meth:`request`.
    """

    kind = ""
    #: Requests in flight at once.
    concurrency = 1
    #: Whether the judge may ask for token log-probabilities (``aggregate="geval"``).
    supports_logprobs = True

    def identity(self) -> dict:
        raise NotImplementedError

    def signature_fields(self) -> dict:
        raise NotImplementedError

    def request_params(self, *, temperature: float, max_tokens: int | None, seed: int | None,
                       logprobs: bool, top_logprobs: int, scale: tuple[int, int]) -> dict:
        raise NotImplementedError

    def request(self, messages: list[dict], params: dict, *, cancel=None) -> Reply:
        """Answer one request: the raw response body.  ``cancel`` (a
        :class:`threading.Event`), when set, stops retrying."""
        raise NotImplementedError


# ----------------------------------------------------------------------------- HTTP

#: The endpoint used when neither ``base_url`` nor ``$OPENAI_BASE_URL`` is given.
DEFAULT_BASE_URL = "https://api.openai.com/v1"

#: The environment variable read for the endpoint when no ``base_url`` is given
#: (the name the OpenAI SDK uses).
BASE_URL_ENV = "OPENAI_BASE_URL"

#: Default cap on a response body: 16 MiB (a 512-token answer with 20 top log-probabilities
#: per token is well under 2 MiB).
DEFAULT_MAX_RESPONSE_BYTES = 16 * 2**20

# Characters that make up a token (API keys, passwords, base64); redaction replaces a secret
# only where it stands as a whole token, never inside a longer one.
_TOKEN_CHARS = r"A-Za-z0-9_\-~+/="


def _split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without its ``user:password@`` part, and the decoded pair (None if absent)."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    clean = urllib.parse.urlunsplit((parts.scheme, hostport, parts.path, parts.query,
                                     parts.fragment))
    return clean, (urllib.parse.unquote(user), urllib.parse.unquote(password))


def _public_url(url: str) -> str:
    """The base URL without user info, query or fragment (what keys and signatures show)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host + (f":{port}" if port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _scrub_url(text: str) -> str:
    """``text`` with the user info of every URL in it replaced by ``***``."""
    return re.sub(r"(?i)\b(https?://)[^/\s@]*@", r"\1***@", text)


def redact(text: str, secrets) -> str:
    """``text`` with each secret replaced by ``***`` where it stands as a whole token.

    A secret is replaced only where it is not part of a longer token (letters,
    digits and ``_-~+/=``; a ``.`` ends a token unless a token character
    follows it), so a short key such as ``"1"`` leaves ``"HTTP 401"`` intact
    and a key that is the start of a longer token does not cut that token.
    The user info of URLs (``https://user:pass@host``) is replaced too.
    """
    text = _scrub_url(str(text))
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        rx = (rf"(?<![{_TOKEN_CHARS}.]){re.escape(secret)}"
              rf"(?![{_TOKEN_CHARS}]|\.[{_TOKEN_CHARS}])")
        text = re.sub(rx, "***", text)
    return text


def _retry_after(headers, now: float | None = None) -> float | None:
    """Seconds asked by a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if headers is None:
        return None
    value = headers.get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        seconds = when.timestamp() - (time.time() if now is None else now)
        return max(seconds, 0.0)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class SystemClock:
    """The clock the HTTP backend waits with between attempts (tests inject a fake one).

    ``sleep(seconds, cancel)`` waits, returning True if ``cancel`` (a
    :class:`threading.Event` or None) was set meanwhile.
    """

    @staticmethod
    def sleep(seconds: float, cancel=None) -> bool:
        if cancel is None:
            time.sleep(seconds)
            return False
        return cancel.wait(seconds)


class _Deadline:
    """A wall-clock limit on one HTTP attempt: connecting, sending, headers and body.

    A timer shuts the attempt's socket down when the limit passes, so a
    server that trickles bytes (each read succeeding before a per-read
    time-out) cannot hold the request beyond it.
    """

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._socks: list = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    @staticmethod
    def _shutdown(sock) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _fire(self) -> None:
        with self._lock:
            self.expired = True
            socks = list(self._socks)
        for sock in socks:
            self._shutdown(sock)

    def attach(self, sock) -> None:
        with self._lock:
            self._socks.append(sock)
            expired = self.expired
        if expired:
            self._shutdown(sock)

    def remaining(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            self.expired = True
            raise TimeoutError("deadline passed")
        return left

    def cancel(self) -> None:
        self._timer.cancel()


def _deadline_connection(base, deadline: _Deadline):
    """An ``http.client`` connection class whose sockets obey ``deadline``."""

    class Connection(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

            def create(address, timeout=None, source_address=None, *rest, **kw):
                sock = socket.create_connection(address, deadline.remaining(), source_address)
                deadline.attach(sock)
                return sock

            self._create_connection = create

        def connect(self):
            super().connect()
            deadline.attach(self.sock)  # the TLS socket, for https

    return Connection


def _opener(deadline: _Deadline) -> urllib.request.OpenerDirector:
    """An opener that never follows redirects and returns every status as a response.

    Only the proxy handler (``HTTP(S)_PROXY``, ``NO_PROXY``) and the two
    protocol handlers are installed: no redirect handler (a 3xx is returned,
    and refused by the caller), no error processor (a 4xx/5xx is returned,
    not raised), no other scheme (``file:``, ``ftp:``, ``data:``).
    """

    class HTTP(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(_deadline_connection(http.client.HTTPConnection, deadline), req)

    class HTTPS(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(_deadline_connection(http.client.HTTPSConnection, deadline), req,
                                context=self._context)

    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), HTTP(), HTTPS()):
        opener.add_handler(handler)
    return opener


class _Refused(Exception):
    """A response that must not be used and must not be retried (redirect, too large)."""


class OpenAIBackend(JudgeBackend):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp, TGI, ...).

    Parameters
    ----------
    model : str
        The model name sent in each request (``"gpt-4o-mini"``, the name a
        vLLM server serves, ...).
    base_url : str, optional
        The API root (redirects are never followed); requests go to
        ``{base_url}/chat/completions``.
        Precedence: this argument, else the environment variable
        ``$OPENAI_BASE_URL`` (read when the backend is built), else
        ``"https://api.openai.com/v1"``.  User info in it
        (``https://user:pass@host/v1``) is sent as HTTP Basic authentication
        and never shown: keys, signatures, reprs, logs and errors carry the
        URL without it.
    api_key_env : str
        Name of the environment variable holding the API key, which is
        never stored, logged, hashed into a cache key or shown in an error
        (default ``"OPENAI_API_KEY"``).  The key is read at each request and
        sent as ``Authorization: Bearer <key>`` when the variable is set and
        not empty; a server echoing it is redacted (see :func:`redact`).
    api_key_header : str
        The header carrying the key: ``"Authorization"`` (default) as
        ``Bearer <key>``, any other name (e.g. ``"api-key"`` for Azure
        OpenAI) the bare key.
    timeout : float
        Deadline of one attempt in seconds (default 60): connecting,
        sending, and receiving the whole response must fit in it, however
        the server paces its bytes.  An attempt past it is abandoned and
        counts as failed (retried).
    max_retries : int
        Retries after a failed attempt (default 5): HTTP 429 and 5xx,
        time-outs, dropped connections and unreadable 200 bodies are
        retried; other HTTP errors (400, 401, 404, 408, ...) are not, and a
        redirect (3xx) is refused, never followed.
    backoff : float
        Base wait before retry ``k`` (``k = 0, 1, ...``):
        ``min(max_backoff, backoff * 2**k) * (1 - jitter * u)`` seconds
        with ``u`` uniform on [0, 1) from ``rng`` (default 1.0).  When the
        server sends ``Retry-After`` (seconds or an HTTP date), exactly that
        wait is used; if it exceeds ``max_backoff`` the request fails at once
        (it is not retried early).
    max_backoff : float
        Longest wait between attempts (default 60).
    jitter : float
        Fraction of the backoff drawn at random, in [0, 1] (default 0.5), so
        that concurrent requests do not retry in lockstep; 0 waits exactly
        ``min(max_backoff, backoff * 2**k)``.
    rng : seed or numpy.random.Generator, optional
        Draws the jitter (anything :func:`numpy.random.default_rng`
        accepts); it changes waits only, never answers or cache keys.
    concurrency : int
        Requests in flight at once, each in a thread (default 4).
    max_response_bytes : int
        Largest response body accepted (default 16 MiB); a larger one is
        an error (not retried) naming the limit.
    extra_body : dict, optional
        More fields for the request body (e.g. ``{"top_p": 1.0}`` or
        ``{"max_completion_tokens": 800}``); they enter the cache key.
    headers : dict, optional
        More HTTP headers (e.g. ``{"OpenAI-Organization": "..."}``); not part
        of the cache key.  Put secrets in ``api_key_env`` instead.
    clock : object, optional
        What waits between attempts: ``clock.sleep(seconds, cancel) ->
        cancelled``; default :class:`SystemClock` (tests inject a recorder).

    Notes
    -----
    Each sample is one request with ``n=1``; the judge's ``seed`` is turned
    into a per-request ``seed`` field (see :class:`LLMJudge`), which
    endpoints that support it use for best-effort reproducibility.  With
    ``aggregate="geval"`` the request asks for ``logprobs`` and
    ``top_logprobs``.  Requests go to the host of ``base_url`` only (or
    through the proxy of ``HTTPS_PROXY``/``HTTP_PROXY``); redirects are never
    followed.  Retries are logged to the ``"metaeval.judge"`` logger
    (:mod:`logging`, level WARNING), with secrets redacted; a request that
    fails for good is raised (and logged by the judge when it goes on).
    """

    kind = "openai"

    def __init__(self, model: str, *, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", api_key_header: str = "Authorization",
                 timeout: float = 60.0,
                 max_retries: int = 5, backoff: float = 1.0, max_backoff: float = 60.0,
                 jitter: float = 0.5, rng=None,
                 concurrency: int = 4, max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 extra_body: dict | None = None, headers: dict | None = None, clock=None):
        if not isinstance(model, str) or not model:
            raise ParameterError(f"model={model!r} must be a non-empty str (the served model name)")
        source = "base_url"
        if base_url is None:
            env = os.environ.get(BASE_URL_ENV, "").strip()
            base_url, source = (env, f"${BASE_URL_ENV}") if env else (DEFAULT_BASE_URL, "default")
        if not isinstance(base_url, str) or not re.match(r"^https?://[^/\s]+", base_url):
            shown = _scrub_url(base_url) if isinstance(base_url, str) else base_url
            raise ParameterError(
                f"{source}={shown!r} must be an http:// or https:// URL such as "
                "'https://api.openai.com/v1' or 'http://localhost:8000/v1' (--base-url)"
            )
        clean, userinfo = _split_userinfo(base_url.rstrip("/"))
        try:
            host_ok = bool(urllib.parse.urlsplit(clean).hostname)
            urllib.parse.urlsplit(clean).port  # noqa: B018 - raises on a bad port
        except ValueError:
            host_ok = False
        if not host_ok:
            raise ParameterError(
                f"{source}={_scrub_url(base_url)!r} has no valid host or port (--base-url)")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ParameterError(
                f"api_key_env={api_key_env!r} must be the name of an environment variable"
            )
        if not isinstance(api_key_header, str) or not re.fullmatch(r"[A-Za-z0-9-]+", api_key_header):
            raise ParameterError(
                f"api_key_header={api_key_header!r} must be an HTTP header name such as "
                "'Authorization' or 'api-key'"
            )
        self.model = model
        self.base_url = clean
        self.base_url_source = source
        self._userinfo = userinfo
        self.api_key_env = api_key_env
        self.api_key_header = api_key_header
        timeout = _check_nonneg(timeout, "timeout")
        if timeout == 0:
            raise ParameterError("timeout=0 must be > 0 seconds (--timeout)")
        self.timeout = timeout
        self.max_retries = _check_nonneg_int(max_retries, "max_retries")
        self.backoff = _check_nonneg(backoff, "backoff")
        self.max_backoff = _check_nonneg(max_backoff, "max_backoff")
        self.jitter = _check_nonneg(jitter, "jitter")
        if self.jitter > 1:
            raise ParameterError(f"jitter={jitter!r} must be in [0, 1]")
        self._rng = np.random.default_rng(rng)
        self._rng_lock = threading.Lock()
        self.concurrency = check_positive_int(concurrency, "concurrency")
        self.max_response_bytes = check_positive_int(max_response_bytes, "max_response_bytes")
        if extra_body is not None and not isinstance(extra_body, dict):
            raise ParameterError(f"extra_body={extra_body!r} must be a dict")
        reserved = sorted(set(extra_body or {}) & {"model", "messages", "n", "stream"})
        if reserved:
            raise ParameterError(
                f"extra_body may not set {', '.join(reserved)}: the judge sets them (one "
                "non-streamed completion per sample)"
            )
        try:
            json.dumps(extra_body or {})
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"extra_body must be JSON-serialisable ({exc})") from None
        self.extra_body = dict(extra_body or {})
        if headers is not None and not isinstance(headers, dict):
            raise ParameterError(f"headers={headers!r} must be a dict of str to str")
        self.headers = dict(headers or {})
        if clock is not None and not callable(getattr(clock, "sleep", None)):
            raise ParameterError(f"clock={clock!r} must have a sleep(seconds, cancel) method")
        self.clock = clock if clock is not None else SystemClock()

    def __getstate__(self):  # picklable (worker processes): the lock is recreated
        state = self.__dict__.copy()
        del state["_rng_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._rng_lock = threading.Lock()

    # -------------------------------------------------------------- description
    @property
    def url(self) -> str:
        """The request URL (without user info)."""
        return self.base_url + "/chat/completions"

    @property
    def public_url(self) -> str:
        """The request URL as shown in errors and logs: no user info, query or fragment."""
        return _public_url(self.base_url) + "/chat/completions"

    def identity(self) -> dict:
        return {"kind": self.kind, "url": _public_url(self.base_url), "model": self.model,
                "extra": self.extra_body}

    def signature_fields(self) -> dict:
        out = {"backend": self.kind, "model": self.model, "url": _public_url(self.base_url)}
        if self.extra_body:  # sampling options such as top_p change the answers
            out["extra"] = texts_fingerprint([json.dumps(self.extra_body, sort_keys=True)])
        return out

    def __repr__(self) -> str:
        return (f"OpenAIBackend(model={self.model!r}, base_url={_public_url(self.base_url)!r}, "
                f"api_key_env={self.api_key_env!r})")

    def request_params(self, *, temperature, max_tokens, seed, logprobs, top_logprobs, scale):
        params = {"temperature": temperature}
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if seed is not None:
            params["seed"] = seed
        if logprobs:
            params["logprobs"] = True
            params["top_logprobs"] = top_logprobs
        return params

    # -------------------------------------------------------------- requests
    def _key(self) -> str | None:
        value = os.environ.get(self.api_key_env)
        return value or None

    def _secrets(self) -> list[str]:
        out = [self._key()]
        if self._userinfo is not None:
            user, password = self._userinfo
            pair = f"{user}:{password}"
            out += [password, urllib.parse.quote(password, safe=""), pair,
                    base64.b64encode(pair.encode("utf8")).decode("ascii")]
        return [s for s in out if s]

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets())

    def _redact_body(self, text: str) -> str:
        """A 200 answer with the secrets redacted in every string of its JSON (so a key
        written with JSON escapes, ``\\u0073k-...`` or ``\\/``, is found too); the text as
        received when no string changes."""
        secrets = self._secrets()
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return redact(text, secrets)
        changed = False

        def walk(o):
            nonlocal changed
            if isinstance(o, str):
                r = redact(o, secrets)
                changed = changed or r != o
                return r
            if isinstance(o, list):
                return [walk(v) for v in o]
            if isinstance(o, dict):
                return {walk(k): walk(v) for k, v in o.items()}
            return o

        clean = walk(data)
        return json.dumps(clean, ensure_ascii=False) if changed else text

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   **self.headers}
        key = self._key()
        bearer = self.api_key_header.lower() == "authorization"
        if self._userinfo is not None:
            if key and bearer:
                raise JudgeRequestError(
                    f"{self.public_url}: base_url has user info (sent as Basic authentication) "
                    f"and ${self.api_key_env} is set (sent as Bearer): both go in the "
                    "Authorization header; unset one, or pass another --api-key-env",
                    attempts=0)
            token = base64.b64encode(":".join(self._userinfo).encode("utf8")).decode("ascii")
            headers["Authorization"] = f"Basic {token}"
        if key:
            headers[self.api_key_header] = f"Bearer {key}" if bearer else key
        return headers

    def _post(self, payload: bytes):
        """One attempt: ``(status, headers, body text)``, within the deadline ``timeout``.

        Raises ``TimeoutError`` past the deadline, ``_Refused`` for a redirect
        or an oversized body, and network errors as they come.
        """
        req = urllib.request.Request(self.url, data=payload, headers=self._headers(),
                                     method="POST")
        deadline = _Deadline(self.timeout)
        try:
            with _opener(deadline).open(req, timeout=deadline.remaining()) as resp:
                status = resp.status
                if 300 <= status < 400:
                    location = resp.headers.get("Location") or ""
                    try:
                        where = _public_url(urllib.parse.urljoin(self.url, location))
                    except ValueError:
                        where = "an unreadable Location"
                    raise _Refused(
                        f"HTTP {status} redirect to {where} refused: the judge never follows "
                        "redirects (the prompt and the API key would go to another URL); set "
                        "--base-url to the final endpoint")
                limit = self.max_response_bytes if status == 200 else min(
                    self.max_response_bytes, 65536)
                length = resp.headers.get("Content-Length")
                if status == 200 and length and length.strip().isdigit() \
                        and int(length) > limit:
                    raise _Refused(self._too_large(f"announces {int(length)} bytes"))
                chunks, total = [], 0
                while True:
                    chunk = resp.read(min(65536, limit + 1 - total))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    total += len(chunk)
                    if total > limit:
                        if status == 200:
                            raise _Refused(self._too_large(f"sent more than {limit} bytes"))
                        break  # an error body: its start is enough
                    if deadline.expired:
                        raise TimeoutError("deadline passed")
                if deadline.expired:
                    raise TimeoutError("deadline passed")
                return status, resp.headers, b"".join(chunks).decode("utf8", "replace")
        except _Refused:
            raise
        except (urllib.error.URLError, OSError, HTTPException) as exc:
            if deadline.expired:
                raise TimeoutError("deadline passed") from None
            raise exc
        finally:
            deadline.cancel()

    def _too_large(self, what: str) -> str:
        return (f"the response {what}, over max_response_bytes={self.max_response_bytes} "
                "(raise it with --max-response-bytes if the endpoint is trusted)")

    def _wait(self, attempt: int) -> float:
        base = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        with self._rng_lock:
            u = float(self._rng.random())
        return base * (1.0 - self.jitter * u)

    def request(self, messages, params, *, cancel=None) -> Reply:
        """POST one chat completion; retry transient failures; the raw body.

        Raises
        ------
        JudgeRequestError
            For a non-retried HTTP error, a refused redirect, an oversized
            response, or when ``max_retries`` retries all failed; the message
            names the endpoint (without credentials), the status or error,
            the attempts, and never a secret.
        """
        body = {**self.extra_body, **params, "model": self.model, "messages": messages, "n": 1}
        payload = json.dumps(body, ensure_ascii=False).encode("utf8")
        where = self.public_url
        attempt = 0
        while True:
            attempt += 1
            wait = None
            last_status = None
            try:
                status, headers, text = self._post(payload)
            except _Refused as exc:
                msg = self._redact(f"{where}: {exc} (not retried)")
                logger.debug(msg)
                raise JudgeRequestError(msg, attempts=attempt) from None
            except TimeoutError:
                last = f"no complete response within timeout={self.timeout:g} s (deadline)"
            except (urllib.error.URLError, OSError, HTTPException) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, TimeoutError):
                    last = f"no complete response within timeout={self.timeout:g} s (deadline)"
                else:
                    last = f"{type(reason).__name__}: {reason}"
            else:
                if status == 200:
                    problem = _check_body(text)
                    if problem is None:
                        logger.debug("%s: answered (attempt %d)", where, attempt)
                        # a server may echo the request (its Authorization header): the key
                        # never reaches the cache, --out or the terminal
                        return Reply(self._redact_body(text), attempt)
                    last = f"HTTP 200 with an unreadable body ({problem})"
                elif status == 429 or 500 <= status < 600:
                    last = f"HTTP {status}: {_snippet(text)}"
                    last_status = status
                    wait = _retry_after(headers)
                else:
                    hint = (f"; check the API key in ${self.api_key_env} (set: "
                            f"{'yes' if self._key() else 'no'})" if status in (401, 403) else "")
                    msg = self._redact(
                        f"{where}: HTTP {status} (not retried): {_snippet(text)}{hint}")
                    logger.debug(msg)
                    raise JudgeRequestError(msg, status=status, attempts=attempt)
            if attempt > self.max_retries:
                msg = self._redact(
                    f"{where}: gave up after {attempt} attempts (max_retries="
                    f"{self.max_retries}); last error: {last}")
                logger.debug(msg)
                raise JudgeRequestError(msg, status=last_status, attempts=attempt)
            if wait is not None and wait > self.max_backoff:
                msg = self._redact(
                    f"{where}: the server asks to wait {wait:g} s before retrying (Retry-After), "
                    f"more than max_backoff={self.max_backoff:g} s; gave up after {attempt} "
                    f"attempts (raise --max-backoff, or run again later: answers received are "
                    f"cached); last error: {last}")
                logger.debug(msg)
                raise JudgeRequestError(msg, status=last_status, attempts=attempt)
            delay = wait if wait is not None else self._wait(attempt)
            logger.warning(self._redact(
                f"{where}: attempt {attempt} failed ({last}); retrying in {delay:.3g} s"))
            if self.clock.sleep(delay, cancel):
                raise JudgeRequestError(self._redact(
                    f"{where}: cancelled after {attempt} attempts (another request failed); "
                    f"last error: {last}"), status=last_status, attempts=attempt)


def _snippet(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _check_body(text: str) -> str | None:
    """None if ``text`` is a chat-completions response with a message, else the problem."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return f"not JSON: {exc}"
    except RecursionError:  # the server's answer, not the data: a failed request
        return "JSON nested too deeply to read"
    try:
        choice = data["choices"][0]
        choice["message"]
    except (KeyError, IndexError, TypeError):
        return "no choices[0].message"
    return None


# ----------------------------------------------------------------------------- local model


def _cache_kwargs(model, cache) -> dict:
    """The key/value cache as the keyword the model's ``forward`` takes.

    transformers 5.x renamed ``past_key_values`` to ``cache`` and warns that
    the old keyword goes away in 5.40; older releases know only
    ``past_key_values``.  The name is read from the signature of ``forward``.
    """
    if cache is None:
        return {}
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        params = {}
    return {"cache" if "cache" in params else "past_key_values": cache}


def _cache_of(output):
    """The key/value cache of a model output, under its new name (``cache``) or its old one,
    without touching the deprecated attribute."""
    keys = output.keys() if hasattr(output, "keys") else ()
    if "cache" in keys:
        return output["cache"]
    if "past_key_values" in keys:
        return output["past_key_values"]
    return None


# Per model folder: a boolean mask of the tokens whose text starts with a digit.
_DIGIT_START: dict[tuple, np.ndarray] = {}

DECODINGS = {
    "generate": "sample a free answer token by token (temperature, max_tokens), then parse it",
    "rating": "append answer_prefix to the prompt and draw the rating from the model's exact "
              "probabilities of the scale's values (no analysis is generated)",
}


class LocalBackend(JudgeBackend):
    """A causal language model in a local folder, run through ``transformers``.

    Parameters
    ----------
    model : str or Path
        A folder written by ``save_pretrained`` (``config.json``, tokenizer,
        weights) holding an ``AutoModelForCausalLM``.  Nothing is downloaded.
    decoding : {"generate", "rating"}
        How the answer is made: a free answer sampled token by token, then
        parsed (default), or the rating drawn from the probabilities of the
        scale's values.  ``"generate"``: sample an answer token by token at the
        judge's temperature (full-vocabulary sampling: no top-k or top-p; 0
        is greedy) for at most ``max_tokens`` new tokens or until the EOS
        token, then parse it like an API answer.  ``"rating"``: append
        ``answer_prefix`` to the prompt and compute the model's probability
        of each value of the scale as the answer (see Notes); the rating is
        drawn from those probabilities at the judge's temperature, and the
        answer is ``answer_prefix + " " + value``.  The analysis the Table 4
        prompt asks for is then skipped.
    answer_prefix : str
        What the answer is forced to start with in ``"rating"`` decoding
        (default ``"Rating:"``, which the default parser reads).
    chat_template : bool, optional
        Wrap the prompt in the tokenizer's chat template (as one user
        message, with the generation prompt).  Default: when the tokenizer
        has one.
    device : str
        Torch device, such as ``"cuda:0"`` (default ``"cpu"``).

    Notes
    -----
    **Seeds.**  Each request has its own seed (see :class:`LLMJudge`): a
    ``torch.Generator`` seeded with it draws the tokens of
    ``"generate"``, and ``numpy.random.default_rng(seed).random()`` draws the
    rating of ``"rating"`` (inverse CDF over the scale in increasing order).
    Requests are answered one at a time, so answers never depend on what
    else is in flight.

    **Rating probabilities** (``"rating"``).  With ``x`` the prompt followed
    by ``answer_prefix``, and ``c(v)`` the tokens of ``" " + str(v)`` encoded
    on their own, ``P(v) = prod_j p(c_j(v) | x, c_<j(v)) * (1 - D)``, where
    ``D`` is the probability that the next token starts with a digit (which
    would make the number longer).  Multi-token numbers (``"10"``,
    ``"100"`` with tokenizers that split digits) are thus exact, and the
    ``P(v)`` of distinct values are probabilities of disjoint answers (their
    sum, ``mass``, is at most 1).  The draw uses ``P(v)`` renormalised over
    the scale and sharpened by the temperature: ``q(v) ~ P(v) ** (1 / T)``;
    ``T = 0`` takes the most probable value (the smallest on ties).  The
    ``P(v)`` are stored with the answer (``scale_logprobs``), which is what
    ``aggregate="geval"`` reads.
    """

    kind = "local"
    concurrency = 1

    def __init__(self, model, *, decoding: str = "generate", answer_prefix: str = "Rating:",
                 chat_template: bool | None = None, device: str = "cpu"):
        self.model = str(local_model_dir(model))
        self._fingerprint = folder_fingerprint(Path(self.model))
        self.decoding = check_choice(decoding, "decoding", tuple(DECODINGS))
        if not isinstance(answer_prefix, str):
            raise ParameterError(f"answer_prefix={answer_prefix!r} must be a str")
        self.answer_prefix = answer_prefix
        if chat_template is not None and not isinstance(chat_template, bool):
            raise ParameterError(f"chat_template={chat_template!r} must be True, False or None")
        self.chat_template = chat_template
        if not isinstance(device, str):
            raise ParameterError(f"device={device!r} must be a str such as 'cpu' or 'cuda:0'")
        self.device = device
        self._memo: dict = {}

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_memo"] = {}
        return state

    def identity(self) -> dict:
        out = {"kind": self.kind, "model": f"{Path(self.model).name}@{self._fingerprint}",
               "decoding": self.decoding, "chat": self.chat_template,
               "transformers": library_version("transformers"), "torch": library_version("torch")}
        if self.decoding == "rating":
            out["prefix"] = self.answer_prefix
        return out

    def signature_fields(self) -> dict:
        out = {"backend": self.kind, "model": f"{Path(self.model).name}@{self._fingerprint}",
               "decoding": self.decoding}
        if self.decoding == "rating":
            out["prefix"] = self.answer_prefix
        if self.chat_template is not None:  # changes the prompt the model sees
            out["chat"] = texts_fingerprint([str(self.chat_template)])
        out["transformers"] = library_version("transformers")
        return out

    def __repr__(self) -> str:
        return f"LocalBackend(model={self.model!r}, decoding={self.decoding!r})"

    def request_params(self, *, temperature, max_tokens, seed, logprobs, top_logprobs, scale):
        if seed is None:
            raise ParameterError(
                "the local backend samples with explicit seeds: pass seed=<int> to the judge"
            )
        params = {"temperature": temperature, "seed": seed}
        if self.decoding == "generate":
            if max_tokens is None:
                raise ParameterError(
                    "max_tokens=None: the local backend needs a limit on generated tokens"
                )
            params["max_tokens"] = max_tokens
            if logprobs:
                params["logprobs"] = True
                params["top_logprobs"] = top_logprobs
        else:
            params["scale"] = list(scale)
        return params

    # -------------------------------------------------------------- model helpers
    def _load(self):
        require("torch", "torch")
        from ._lm import load_model

        return load_model(self.model, "causal", self.device)

    def _prompt_ids(self, tok, messages, suffix: str = "") -> list[int]:
        use_chat = self.chat_template
        if use_chat is None:
            use_chat = bool(getattr(tok, "chat_template", None))
        if use_chat:
            if not getattr(tok, "chat_template", None):
                raise ParameterError(
                    f"chat_template=True but the tokenizer in {self.model} has no chat template"
                )
            text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            ids = tok(text + suffix, add_special_tokens=False)["input_ids"]
        else:
            text = "\n\n".join(m["content"] for m in messages)
            ids = tok(text + suffix, add_special_tokens=True)["input_ids"]
        return list(ids)

    @staticmethod
    def _eos_ids(tok, model) -> set[int]:
        out = set()
        for value in (tok.eos_token_id, getattr(model.generation_config, "eos_token_id", None),
                      getattr(model.config, "eos_token_id", None)):
            if isinstance(value, int):
                out.add(value)
            elif isinstance(value, (list, tuple)):
                out.update(v for v in value if isinstance(v, int))
        return out

    def _digit_start(self, tok, vocab: int) -> np.ndarray:
        """Tokens whose text (decoded after an anchor token) starts with a digit."""
        key = (self.model, self._fingerprint, vocab)
        hit = _DIGIT_START.get(key)
        if hit is None:
            anchor = list(tok("a", add_special_tokens=False)["input_ids"])
            base = tok.decode(anchor)
            n_tok = len(tok)
            texts = tok.batch_decode([anchor + [i] for i in range(min(vocab, n_tok))])
            hit = np.zeros(vocab, dtype=bool)
            for i, t in enumerate(texts):
                rest = t.removeprefix(base)
                hit[i] = bool(rest) and rest[0].isdigit()
            _DIGIT_START[key] = hit
        return hit

    # -------------------------------------------------------------- answering
    def request(self, messages, params, *, cancel=None) -> Reply:
        tok, model = self._load()
        if self.decoding == "generate":
            body = self._generate(tok, model, messages, params)
        else:
            body = self._rate(tok, model, messages, params)
        return Reply(json.dumps(body, ensure_ascii=False), 1)

    def _limit(self, tok, model) -> int:
        from ._lm import _max_positions

        return _max_positions(tok, model, None)

    def _generate(self, tok, model, messages, params) -> dict:
        import torch

        ids = self._prompt_ids(tok, messages)
        limit = self._limit(tok, model)
        if not ids:
            raise JudgeRequestError("the prompt has no tokens", attempts=1)
        if len(ids) >= limit:
            raise JudgeRequestError(
                f"the prompt has {len(ids)} tokens; the model in {self.model} accepts at most "
                f"{limit} positions (shorten the texts or the template)", attempts=1)
        temperature = params["temperature"]
        k = params.get("top_logprobs", 0) if params.get("logprobs") else 0
        eos = self._eos_ids(tok, model)
        gen = torch.Generator(device="cpu").manual_seed(int(params["seed"]))
        out: list[int] = []
        records = []
        finish = "length"
        past = None
        cur = torch.tensor([ids], device=self.device)
        with torch.inference_mode():
            for _ in range(params["max_tokens"]):
                if len(ids) + len(out) >= limit:
                    break
                res = model(input_ids=cur, use_cache=True, **_cache_kwargs(model, past))
                past = _cache_of(res)
                logits = res.logits[0, -1].float().cpu()
                if temperature == 0:
                    nxt = int(torch.argmax(logits))
                else:
                    probs = torch.softmax(logits / temperature, dim=-1)
                    nxt = int(torch.multinomial(probs, 1, generator=gen))
                if nxt in eos:
                    finish = "stop"
                    break
                if k:
                    logp = torch.log_softmax(logits, dim=-1)
                    top = torch.topk(logp, min(k, logp.numel()))
                    records.append((nxt, float(logp[nxt]),
                                    list(zip(top.indices.tolist(), top.values.tolist()))))
                out.append(nxt)
                cur = torch.tensor([[nxt]], device=self.device)
        text = tok.decode(out, skip_special_tokens=True)
        choice = {"index": 0, "message": {"role": "assistant", "content": text},
                  "finish_reason": finish, "logprobs": None}
        if k:
            choice["logprobs"] = {"content": self._token_records(tok, out, records)}
        return {"object": "metaeval.local", "model": Path(self.model).name, "choices": [choice],
                "usage": {"prompt_tokens": len(ids), "completion_tokens": len(out)}}

    @staticmethod
    def _token_records(tok, out, records):
        """OpenAI-style ``logprobs.content``: token texts concatenate to the answer."""
        content = []
        prev = ""
        single = {}

        def text_of(i):
            if i not in single:
                single[i] = tok.decode([i], skip_special_tokens=False)
            return single[i]

        for j, (nxt, lp, top) in enumerate(records):
            full = tok.decode(out[: j + 1], skip_special_tokens=True)
            piece = full[len(prev):] if full.startswith(prev) else text_of(nxt)
            prev = full
            content.append({"token": piece, "logprob": lp,
                            "top_logprobs": [{"token": text_of(i), "logprob": v} for i, v in top]})
        return content

    def _scale_logprobs(self, tok, model, messages, lo: int, hi: int) -> np.ndarray:
        """``log P(v)`` for every value of the scale (see the class Notes), memoised
        per prompt (the samples of one prompt share them)."""
        import copy

        import torch

        key = (json.dumps(messages, sort_keys=True), lo, hi)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        values = list(range(lo, hi + 1))
        base = self._prompt_ids(tok, messages, suffix=self.answer_prefix)
        cands = [list(tok(" " + str(v), add_special_tokens=False)["input_ids"]) for v in values]
        limit = self._limit(tok, model)
        longest = len(base) + max(len(c) for c in cands)
        if longest > limit:
            raise JudgeRequestError(
                f"the prompt with its answer needs {longest} tokens; the model in {self.model} "
                f"accepts at most {limit} positions (shorten the texts or the template)",
                attempts=1)
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        logps = np.empty(len(values))
        step = 16
        with torch.inference_mode():
            # the prompt once; then every candidate after it, from its key/value cache
            res = model(input_ids=torch.tensor([base], device=self.device), use_cache=True)
            past = _cache_of(res)
            if past is None or not hasattr(past, "batch_repeat_interleave"):
                raise JudgeRequestError(
                    f"the model in {self.model} returns no key/value cache that can be "
                    "repeated over a batch; decoding='rating' needs one", attempts=1)
            first = torch.log_softmax(res.logits[0, -1].float().cpu(), dim=-1)
            digit = torch.from_numpy(self._digit_start(tok, first.shape[-1]))
            for start in range(0, len(values), step):
                group = cands[start : start + step]
                width = max(len(c) for c in group)
                ids = torch.full((len(group), width), pad, dtype=torch.long)
                for j, c in enumerate(group):
                    ids[j, : len(c)] = torch.tensor(c)
                cache = copy.deepcopy(past)
                cache.batch_repeat_interleave(len(group))
                attn = torch.ones((len(group), len(base) + width), dtype=torch.long)
                out = model(input_ids=ids.to(self.device), attention_mask=attn.to(self.device),
                            use_cache=True, **_cache_kwargs(model, cache))
                # right padding: a candidate's positions never see the padding after it
                logp = torch.log_softmax(out.logits.float().cpu(), dim=-1)
                for j, c in enumerate(group):
                    total = float(first[c[0]]) + sum(float(logp[j, t - 1, c[t]])
                                                     for t in range(1, len(c)))
                    stop = float(torch.logsumexp(logp[j, len(c) - 1][~digit], dim=0))
                    logps[start + j] = total + stop
        if len(self._memo) >= 64:
            self._memo.pop(next(iter(self._memo)))
        self._memo[key] = logps
        return logps

    def _rate(self, tok, model, messages, params) -> dict:
        lo, hi = params["scale"]
        values = list(range(lo, hi + 1))
        logps = self._scale_logprobs(tok, model, messages, lo, hi)
        temperature = params["temperature"]
        if not np.isfinite(logps).any():
            raise JudgeRequestError("every scale value has probability 0 under the model",
                                    attempts=1)
        if temperature == 0:
            pick = int(np.argmax(logps))
        else:
            z = logps / temperature
            q = np.exp(z - np.max(z))
            cdf = np.cumsum(q / q.sum())
            u = np.random.default_rng(int(params["seed"])).random()
            pick = min(int(np.searchsorted(cdf, u, side="right")), len(values) - 1)
        text = f"{self.answer_prefix} {values[pick]}"
        choice = {"index": 0, "message": {"role": "assistant", "content": text},
                  "finish_reason": "stop", "logprobs": None}
        return {"object": "metaeval.local", "model": Path(self.model).name, "choices": [choice],
                "scale_logprobs": {str(v): float(lp) for v, lp in zip(values, logps)}}


BACKENDS = {
    "openai": "an OpenAI-compatible chat-completions HTTP endpoint (OpenAIBackend)",
    "local": "a causal LM in a local folder, through transformers (LocalBackend)",
}


def make_backend(backend, *, model=None, base_url=None, api_key_env=None) -> JudgeBackend:
    """A backend from a name and a model, or ``backend`` itself."""
    if isinstance(backend, JudgeBackend):
        given = [k for k, v in (("model", model), ("base_url", base_url),
                                ("api_key_env", api_key_env)) if v is not None]
        if given:
            raise ParameterError(
                f"{', '.join(given)} given with a backend instance; set them when building "
                "the backend"
            )
        return backend
    check_choice(backend, "backend", tuple(BACKENDS))
    if model is None:
        raise ParameterError(
            f"backend={backend!r} needs model= (the served model name for 'openai', a local "
            "model folder for 'local')"
        )
    if backend == "openai":
        kw = {}
        if base_url is not None:
            kw["base_url"] = base_url
        if api_key_env is not None:
            kw["api_key_env"] = api_key_env
        return OpenAIBackend(model, **kw)
    if base_url is not None or api_key_env is not None:
        raise ParameterError("base_url and api_key_env apply to backend='openai' only")
    return LocalBackend(model)
