"""Backends of the LLM judge: an OpenAI-compatible HTTP endpoint and a local causal LM.

A backend turns one request (chat messages and sampling parameters) into one
raw response body: the JSON text of an OpenAI chat-completions response
(``choices[0].message.content``, ``finish_reason`` and, when asked for,
``logprobs.content``).  The local backend writes the same shape, so one
parser reads both.  Backends never see the judge's cache; the judge caches
each body as soon as :meth:`request` returns it.

:class:`OpenAIBackend` speaks the chat-completions protocol over
:mod:`urllib` (standard library only), with a request timeout and retries
with exponential backoff on HTTP 429, 5xx, time-outs and connection errors.
The API key is read from an environment variable at each request; it is
never stored on the object, in a cache key, a signature, or an error message.

:class:`LocalBackend` runs a causal LM from a local folder through
``transformers`` (imported when it first answers), with an explicit sampling
loop and per-request seeds, so its answers do not depend on batching or on
the order of requests.
"""

from __future__ import annotations

import json
import math
import os
import re
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

#: HTTP statuses retried (besides every 5xx): request timeout, conflict, too many requests.
RETRY_STATUS = (408, 409, 429)


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


def _public_url(url: str) -> str:
    """The base URL without user info, query or fragment (what keys and signatures show)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _retry_after(headers) -> float | None:
    if headers is None:
        return None
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:  # an HTTP date: not worth parsing; fall back to the backoff
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class OpenAIBackend(JudgeBackend):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp, TGI, ...).

    Parameters
    ----------
    model : str
        The model name sent in each request (``"gpt-4o-mini"``, the name a
        vLLM server serves, ...).
    base_url : str
        The API root; requests go to ``{base_url}/chat/completions``.
        Default ``"https://api.openai.com/v1"``.
    api_key_env : str
        Name of the environment variable holding the API key (default
        ``"OPENAI_API_KEY"``), sent as ``Authorization: Bearer ...`` when the
        variable is set and not empty.  The key is read at each request and
        never stored, logged, hashed into a cache key or shown in an error.
    api_key_header : str
        The header carrying the key (default ``"Authorization"``, as
        ``Bearer <key>``); another name sends the bare key in that header
        (e.g. ``"api-key"`` for Azure OpenAI).
    timeout : float
        Seconds to wait for the connection and for each read of the response
        (default 60); a request exceeding it counts as a failed attempt.
    max_retries : int
        Retries after a failed attempt (default 5): HTTP 408, 409, 429 and
        5xx, time-outs, dropped connections and unreadable bodies are
        retried; other HTTP errors (400, 401, 404, ...) are not.
    backoff : float
        Wait before retry ``k`` (``k = 0, 1, ...``) is
        ``min(max_backoff, backoff * 2**k)`` seconds (default 1.0), or the
        server's ``Retry-After`` (in seconds) when it sends one, capped at
        ``max_backoff``.
    max_backoff : float
        Longest wait between attempts (default 60).
    concurrency : int
        Requests in flight at once (threads; default 4).
    extra_body : dict, optional
        More fields for the request body (e.g. ``{"top_p": 1.0}`` or
        ``{"max_completion_tokens": 800}``); they enter the cache key.
    headers : dict, optional
        More HTTP headers (e.g. ``{"OpenAI-Organization": "..."}``); not part
        of the cache key.  Put secrets in ``api_key_env`` instead.

    Notes
    -----
    Each sample is one request with ``n=1``; the judge's ``seed`` is turned
    into a per-request ``seed`` field (see :class:`LLMJudge`), which
    endpoints that support it use for best-effort reproducibility.  With
    ``aggregate="geval"`` the request asks for ``logprobs`` and
    ``top_logprobs``.
    """

    kind = "openai"

    def __init__(self, model: str, *, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str = "OPENAI_API_KEY", api_key_header: str = "Authorization",
                 timeout: float = 60.0,
                 max_retries: int = 5, backoff: float = 1.0, max_backoff: float = 60.0,
                 concurrency: int = 4, extra_body: dict | None = None,
                 headers: dict | None = None):
        if not isinstance(model, str) or not model:
            raise ParameterError(f"model={model!r} must be a non-empty str (the served model name)")
        if not isinstance(base_url, str) or not re.match(r"^https?://[^/\s]+", base_url):
            raise ParameterError(
                f"base_url={base_url!r} must be an http:// or https:// URL such as "
                "'https://api.openai.com/v1' or 'http://localhost:8000/v1'"
            )
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
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.api_key_header = api_key_header
        timeout = _check_nonneg(timeout, "timeout")
        if timeout == 0:
            raise ParameterError("timeout=0 must be > 0 seconds")
        self.timeout = timeout
        self.max_retries = _check_nonneg_int(max_retries, "max_retries")
        self.backoff = _check_nonneg(backoff, "backoff")
        self.max_backoff = _check_nonneg(max_backoff, "max_backoff")
        self.concurrency = check_positive_int(concurrency, "concurrency")
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

    # -------------------------------------------------------------- description
    @property
    def url(self) -> str:
        return self.base_url + "/chat/completions"

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

    def _redact(self, text: str) -> str:
        key = self._key()
        if key:
            text = text.replace(key, "***")
        return text

    def _post(self, payload: bytes):
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   **self.headers}
        key = self._key()
        if key:
            headers[self.api_key_header] = (f"Bearer {key}" if self.api_key_header.lower()
                                            == "authorization" else key)
        req = urllib.request.Request(self.url, data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.status, resp.headers, resp.read().decode("utf8", "replace")
        except urllib.error.HTTPError as exc:
            try:
                body = exc.read().decode("utf8", "replace")
            except (OSError, HTTPException):
                body = ""
            return exc.code, exc.headers, body

    def request(self, messages, params, *, cancel=None) -> Reply:
        """POST one chat completion; retry transient failures; the raw body.

        Raises
        ------
        JudgeRequestError
            For a non-retried HTTP error, or when ``max_retries`` retries all
            failed; the message names the endpoint, the status or error, the
            attempts, and never the API key.
        """
        body = {**self.extra_body, **params, "model": self.model, "messages": messages, "n": 1}
        payload = json.dumps(body, ensure_ascii=False).encode("utf8")
        attempt = 0
        while True:
            attempt += 1
            wait = None
            last_status = None
            try:
                status, headers, text = self._post(payload)
            except (urllib.error.URLError, OSError, HTTPException) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
                    last = f"no response within timeout={self.timeout:g} s"
                else:
                    last = f"{type(reason).__name__}: {reason}"
            else:
                if status == 200:
                    problem = _check_body(text)
                    if problem is None:
                        return Reply(text, attempt)
                    last = f"HTTP 200 with an unreadable body ({problem})"
                elif status in RETRY_STATUS or 500 <= status < 600:
                    last = f"HTTP {status}: {_snippet(text)}"
                    last_status = status
                    wait = _retry_after(headers)
                else:
                    hint = (f"; check the API key in ${self.api_key_env} (set: "
                            f"{'yes' if self._key() else 'no'})" if status in (401, 403) else "")
                    raise JudgeRequestError(self._redact(
                        f"{self.url}: HTTP {status} (not retried): {_snippet(text)}{hint}"),
                        status=status, attempts=attempt)
            if attempt > self.max_retries:
                raise JudgeRequestError(self._redact(
                    f"{self.url}: gave up after {attempt} attempts (max_retries="
                    f"{self.max_retries}); last error: {last}"),
                    status=last_status, attempts=attempt)
            delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
            if wait is not None:
                delay = min(self.max_backoff, wait)
            if cancel is None:
                time.sleep(delay)
            elif cancel.wait(delay):
                raise JudgeRequestError(self._redact(
                    f"{self.url}: cancelled after {attempt} attempts (another request failed); "
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
    try:
        choice = data["choices"][0]
        choice["message"]
    except (KeyError, IndexError, TypeError):
        return "no choices[0].message"
    return None


# ----------------------------------------------------------------------------- local model

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
        ``"generate"`` (default): sample an answer token by token at the
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
        Torch device (``"cpu"``).

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
                res = model(input_ids=cur, past_key_values=past, use_cache=True)
                past = res.past_key_values
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
            past = res.past_key_values
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
                out = model(input_ids=ids.to(self.device), past_key_values=cache,
                            attention_mask=attn.to(self.device), use_cache=True)
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
