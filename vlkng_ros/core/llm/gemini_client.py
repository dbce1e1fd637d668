"""The one Gemini client (``google-genai``) behind both the Gemini LLM and the Gemini perceiver.

It owns retries (the SDK's own are switched off so there is one policy): exponential backoff with
jitter on HTTP 429, 5xx, timeouts, connection errors, truncated or invalid JSON and output that does
not match the requested schema. A safety block (prompt blocked, or a candidate that finished for a
safety reason) is not retried: it raises :class:`ModelBlockedError` at once. A connection that
cannot be made counts on a :class:`CircuitBreaker` (after ``breaker_failures`` in a row every call
raises :class:`BackendUnavailable` at once, with one line saying what is wrong); a rejected key or
an unknown model opens it immediately. The API key is read from the environment variable the
config names and never logged or put in an error message.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any, Sequence

from .base import BackendUnavailable, CircuitBreaker, LLMError, LLMUsage, backoff_sleep
from .json_tools import InvalidModelOutput, parse_and_validate

log = logging.getLogger(__name__)

_BLOCK_REASONS = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY",
                  "IMAGE_PROHIBITED_CONTENT", "RECITATION"}


class ModelBlockedError(LLMError):
    """The model refused (safety/policy block). Retrying the same request will not help."""


class _Retriable(Exception):
    """Internal: this attempt failed for a reason a retry may fix."""


def _transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout, other transport) exception classes of whichever httpx flavour the SDK uses
    (google-genai 1.x uses ``httpx``, newer releases ``httpx2``)."""
    import importlib

    timeouts: list[type[BaseException]] = [TimeoutError]
    transport: list[type[BaseException]] = [ConnectionError]
    for name in ("httpx", "httpx2"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        timeouts.append(mod.TimeoutException)
        transport.append(mod.TransportError)
    return tuple(timeouts), tuple(transport)


def _enum_name(value: Any) -> str:
    if value is None:
        return ""
    return str(getattr(value, "name", value)).split(".")[-1].upper()


class GeminiClient:
    """generate_json over google-genai with one retry/backoff policy.

    ``backoff_base_s`` is the first retry delay; delay n is ``base * 2**n`` (capped at
    ``backoff_max_s``) scaled by a random factor in [0.5, 1.0]."""

    def __init__(self, model: str, api_key_env: str = "GEMINI_API_KEY", base_url: str = "",
                 timeout_s: float = 60.0, max_retries: int = 4, temperature: float = 0.1,
                 backoff_base_s: float = 1.0, backoff_max_s: float = 30.0,
                 max_output_tokens: int | None = None, breaker: CircuitBreaker | None = None) -> None:
        from google import genai
        from google.genai import types

        api_key = os.environ.get(api_key_env, "").strip() if api_key_env else ""
        if not api_key:
            raise LLMError(f"Gemini API key missing: set the environment variable {api_key_env!r} "
                           "(or choose another backend)")
        self.model = model
        self.timeout_s = float(timeout_s)
        self.max_retries = max(0, int(max_retries))
        self.temperature = float(temperature)
        self.backoff_base_s = max(0.0, float(backoff_base_s))
        self.backoff_max_s = float(backoff_max_s)
        self.max_output_tokens = max_output_tokens
        self.breaker = breaker or CircuitBreaker(what=f"gemini {model}")
        self.base_url = base_url or "https://generativelanguage.googleapis.com"
        self._types = types
        http_options = types.HttpOptions(
            base_url=base_url or None,
            api_version="v1beta",  # the version that documents responseJsonSchema
            timeout=max(1, int(self.timeout_s * 1000)),  # milliseconds
            retry_options=types.HttpRetryOptions(attempts=1),  # retries are ours, below
        )
        self._client = genai.Client(api_key=api_key, http_options=http_options)

    @classmethod
    def from_config(cls, cfg: Any, backoff_base_s: float | None = None) -> "GeminiClient":
        """Build from a PerceptionConfig or LLMConfig (same field names). ``retry_backoff_s`` is
        honoured when the config has it; otherwise ``backoff_base_s`` or 1 s."""
        base = backoff_base_s if backoff_base_s is not None else getattr(cfg, "retry_backoff_s", 1.0)
        return cls(model=cfg.model or "gemini-2.5-flash", api_key_env=cfg.api_key_env or "GEMINI_API_KEY",
                   base_url=cfg.base_url, timeout_s=cfg.timeout_s, max_retries=cfg.max_retries,
                   temperature=cfg.temperature, backoff_base_s=base,
                   max_output_tokens=getattr(cfg, "max_output_tokens", None) or None,
                   breaker=CircuitBreaker(getattr(cfg, "breaker_failures", 3),
                                          getattr(cfg, "breaker_reset_s", 60.0), f"gemini {cfg.model}"))

    # ------------------------------------------------------------------------------------------
    def generate_json(self, prompt: str, schema: dict[str, Any] | None,
                      images: Sequence[bytes] = (), usage: LLMUsage | None = None,
                      temperature: float | None = None) -> Any:
        """Send the JPEG ``images`` (each preceded by a text part ``Image i:``, i from 0) and then
        ``prompt``; return the parsed, schema-checked JSON. Raises LLMError after retries."""
        types = self._types
        parts: list[Any] = []
        for i, jpeg in enumerate(images):
            parts.append(types.Part.from_text(text=f"Image {i}:"))
            parts.append(types.Part.from_bytes(data=bytes(jpeg), mime_type="image/jpeg"))
        parts.append(types.Part.from_text(text=prompt))
        contents = [types.Content(role="user", parts=parts)]
        config = types.GenerateContentConfig(
            temperature=self.temperature if temperature is None else float(temperature),
            response_mime_type="application/json",
            response_json_schema=schema or None,
            max_output_tokens=self.max_output_tokens,
        )
        self.breaker.check()
        prompt_chars = len(prompt)
        last_reason = ""
        started = time.monotonic()
        try:
            for attempt in range(self.max_retries + 1):
                if attempt:
                    self._sleep_before_retry(attempt - 1, last_reason)
                    if usage is not None:
                        usage.retries += 1
                if usage is not None:
                    usage.calls += 1
                    usage.prompt_chars += prompt_chars
                try:
                    return self._attempt(contents, config, schema, usage)
                except _Retriable as e:
                    last_reason = str(e)
                    log.warning("Gemini %s: attempt %d/%d failed: %s", self.model, attempt + 1,
                                self.max_retries + 1, last_reason)
        finally:
            if usage is not None:
                usage.seconds += time.monotonic() - started
        raise LLMError(f"Gemini {self.model}: no valid answer after {self.max_retries + 1} "
                       f"attempts; last error: {last_reason}")

    def _attempt(self, contents: Any, config: Any, schema: dict[str, Any] | None,
                 usage: LLMUsage | None) -> Any:
        from google.genai import errors as genai_errors

        timeouts, transport = _transport_errors()

        where = f"Gemini {self.model} at {self.base_url}"
        try:
            response = self._client.models.generate_content(model=self.model, contents=contents,
                                                            config=config)
        except genai_errors.APIError as e:
            code = int(getattr(e, "code", 0) or 0)
            what = f"HTTP {code} {getattr(e, 'status', '') or ''}: {(e.message or '')[:200]}"
            if code in (408, 429) or code >= 500:
                self.breaker.success()  # it answered: reachable
                raise _Retriable(what) from e
            key_problem = code in (401, 403) or "API_KEY" in str(e.message or "").upper()
            if key_problem or code == 404:
                hint = ("check the key in the environment variable the config names"
                        if key_problem else "check perception.model / llm.model")
                self.breaker.failure(f"{where} refused the request ({what[:120]}): {hint}", fatal=True)
                raise BackendUnavailable(self.breaker.reason) from e
            raise LLMError(f"Gemini {self.model} request rejected ({what})") from e
        except timeouts as e:
            if type(e).__name__ == "ConnectTimeout":
                self._connection_failed(where, "connect timed out")
            raise _Retriable(f"request timed out after {self.timeout_s:g} s") from e
        except transport as e:
            self._connection_failed(where, f"cannot connect ({type(e).__name__})")
            raise _Retriable(f"connection failed: {type(e).__name__}: {e}") from e
        self.breaker.success()

        feedback = getattr(response, "prompt_feedback", None)
        block = _enum_name(getattr(feedback, "block_reason", None))
        if block and block != "BLOCK_REASON_UNSPECIFIED":
            raise ModelBlockedError(f"Gemini {self.model} blocked the prompt ({block}); "
                                    "not retried")
        candidates = getattr(response, "candidates", None) or []
        if not candidates:
            raise _Retriable("response has no candidates")
        cand = candidates[0]
        finish = _enum_name(getattr(cand, "finish_reason", None))
        if finish in _BLOCK_REASONS:
            raise ModelBlockedError(f"Gemini {self.model} stopped the answer for a policy reason "
                                    f"(finish_reason {finish}); not retried")
        parts = getattr(getattr(cand, "content", None), "parts", None) or []
        text = "".join(p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", False))
        if usage is not None:
            usage.output_chars += len(text)
            meta = getattr(response, "usage_metadata", None)
            if meta is not None:
                usage.input_tokens += int(getattr(meta, "prompt_token_count", 0) or 0)
                usage.output_tokens += int(getattr(meta, "candidates_token_count", 0) or 0)
        try:
            return parse_and_validate(text, schema)
        except InvalidModelOutput as e:
            suffix = " (output hit the token limit)" if finish == "MAX_TOKENS" else ""
            raise _Retriable(f"{e}{suffix}") from e

    def _connection_failed(self, where: str, what: str) -> None:
        reason = (f"{where}: {what}. Check the network (or base_url) and that the host can reach "
                  "Google's API; chunks stay queued")
        if self.breaker.failure(reason):
            raise BackendUnavailable(self.breaker.reason)

    def _sleep_before_retry(self, retry_index: int, reason: str) -> None:
        backoff_sleep(self.backoff_base_s, self.backoff_max_s, retry_index, f"Gemini {self.model}", reason)
