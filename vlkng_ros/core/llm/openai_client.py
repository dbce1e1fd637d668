"""The OpenAI-compatible chat-completions client (the ``openai`` package) behind the ``openai``
LLM and perception backends: the API that Ollama, vLLM, llama.cpp's ``llama-server``, LM Studio
and OpenAI itself serve.

Structured output: ``structured_output: auto`` first asks for ``response_format`` ``json_schema``
(vLLM, llama.cpp, LM Studio, Ollama >= 0.5 and OpenAI honour it); a server that rejects it (HTTP
400 naming response_format / json_schema) is asked for ``json_object`` and then for nothing, once
per client, with the schema written into the prompt. Whatever comes back is parsed and checked by
``json_tools`` (fenced blocks, prose around the JSON, wrong schema), exactly as for Gemini.

Failing well: one retry policy (the SDK's own retries are off): exponential backoff with jitter on
HTTP 408/429/5xx, read timeouts, truncated (``finish_reason: length``), non-JSON and wrong-schema
answers. A connection that cannot be made (refused, DNS, connect timeout) counts on a
:class:`CircuitBreaker`: after ``breaker_failures`` in a row the client raises
:class:`BackendUnavailable` at once, with one line saying what to start or fix; a rejected key
(401/403) or an unknown model (404) opens it immediately. The API key comes from the environment
variable the config names and is never logged or put in an error message.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import time
from typing import Any, Sequence

from .base import BackendUnavailable, CircuitBreaker, LLMError, LLMUsage, backoff_sleep
from .json_tools import InvalidModelOutput, parse_and_validate
from .transformers_llm import json_instruction

log = logging.getLogger(__name__)

STRUCTURED_MODES = ("auto", "json_schema", "json_object", "none")


class _Retriable(Exception):
    """Internal: this attempt failed for a reason a retry may fix."""


class _Unsupported(Exception):
    """Internal: the server rejected the response_format we asked for."""


def _connect_failure(e: BaseException) -> bool:
    """A connection that could not be made (as opposed to a slow answer)."""
    cause = e.__cause__ or e.__context__
    name = type(cause).__name__ if cause is not None else ""
    return name in ("ConnectError", "ConnectTimeout", "gaierror", "ConnectionRefusedError") or (
        type(e).__name__ == "APIConnectionError" and name != "ReadTimeout")


class OpenAICompatClient:
    """generate_json over ``/v1/chat/completions`` with one retry/backoff policy."""

    def __init__(self, model: str, base_url: str, api_key_env: str = "OPENAI_API_KEY",
                 timeout_s: float = 60.0, connect_timeout_s: float = 5.0, max_retries: int = 2,
                 temperature: float = 0.1, backoff_base_s: float = 1.0, backoff_max_s: float = 30.0,
                 max_output_tokens: int = 4096, structured_output: str = "auto",
                 breaker: CircuitBreaker | None = None) -> None:
        import openai

        if not model:
            raise LLMError("openai backend: no model name (set perception.model / llm.model)")
        if not base_url:
            raise LLMError("openai backend: no base_url (e.g. http://localhost:11434/v1 for Ollama)")
        if structured_output not in STRUCTURED_MODES:
            raise LLMError(f"structured_output {structured_output!r}: choose one of {STRUCTURED_MODES}")
        key = os.environ.get(api_key_env, "").strip() if api_key_env else ""
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout_s = float(timeout_s)
        self.max_retries = max(0, int(max_retries))
        self.temperature = float(temperature)
        self.backoff_base_s = max(0.0, float(backoff_base_s))
        self.backoff_max_s = float(backoff_max_s)
        self.max_output_tokens = int(max_output_tokens) if max_output_tokens else None
        self.mode = "json_schema" if structured_output == "auto" else structured_output
        self._fallback = structured_output == "auto"
        self.breaker = breaker or CircuitBreaker(what=f"openai {model}")
        self._openai = openai
        # local servers (Ollama, llama.cpp) need no key; the SDK insists on a non-empty one
        self._client = openai.OpenAI(
            api_key=key or "no-key", base_url=self.base_url, max_retries=0,
            timeout=openai.Timeout(self.timeout_s, connect=min(self.timeout_s, float(connect_timeout_s))))
        self._key_set = bool(key)
        self._key_env = api_key_env

    @classmethod
    def from_config(cls, cfg: Any, backoff_base_s: float | None = None) -> "OpenAICompatClient":
        """From a PerceptionConfig or LLMConfig whose model/base_url/api_key_env are resolved."""
        base = backoff_base_s if backoff_base_s is not None else cfg.retry_backoff_s
        return cls(model=cfg.model, base_url=cfg.base_url, api_key_env=cfg.api_key_env,
                   timeout_s=cfg.timeout_s, connect_timeout_s=cfg.connect_timeout_s,
                   max_retries=cfg.max_retries, temperature=cfg.temperature, backoff_base_s=base,
                   max_output_tokens=cfg.max_output_tokens, structured_output=cfg.structured_output,
                   breaker=CircuitBreaker(cfg.breaker_failures, cfg.breaker_reset_s, f"openai {cfg.model}"))

    # ------------------------------------------------------------------------------------------
    def _messages(self, prompt: str, images: Sequence[bytes]) -> list[dict[str, Any]]:
        if not images:
            return [{"role": "user", "content": prompt}]
        content: list[dict[str, Any]] = []
        for i, jpeg in enumerate(images):
            url = "data:image/jpeg;base64," + base64.b64encode(bytes(jpeg)).decode("ascii")
            content += [{"type": "text", "text": f"Image {i}:"},
                        {"type": "image_url", "image_url": {"url": url}}]
        content.append({"type": "text", "text": prompt})
        return [{"role": "user", "content": content}]

    def _response_format(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if self.mode == "json_schema" and schema:
            return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        if self.mode in ("json_schema", "json_object"):
            return {"type": "json_object"}
        return None

    def generate_json(self, prompt: str, schema: dict[str, Any] | None,
                      images: Sequence[bytes] = (), usage: LLMUsage | None = None,
                      temperature: float | None = None) -> Any:
        """Send the JPEG ``images`` (each after a text ``Image i:``) then ``prompt``; return the
        parsed, schema-checked JSON. Raises LLMError after retries, BackendUnavailable at once
        while the circuit breaker is open."""
        self.breaker.check()
        last_reason = ""
        started = time.monotonic()
        attempt = 0
        try:
            while attempt <= self.max_retries:
                if attempt:
                    self._sleep_before_retry(attempt - 1, last_reason)
                    if usage is not None:
                        usage.retries += 1
                text = prompt if self.mode == "json_schema" and schema else json_instruction(prompt, schema)
                if usage is not None:
                    usage.calls += 1
                    usage.prompt_chars += len(text)
                try:
                    return self._attempt(text, schema, images, usage, temperature)
                except _Unsupported as e:
                    log.warning("%s at %s: %s; asking without it from now on", self.model,
                                self.base_url, e)
                    continue  # not counted as a retry: the mode changed
                except _Retriable as e:
                    last_reason = str(e)
                    log.warning("openai %s: attempt %d/%d failed: %s", self.model, attempt + 1,
                                self.max_retries + 1, last_reason)
                attempt += 1
        finally:
            if usage is not None:
                usage.seconds += time.monotonic() - started
        raise LLMError(f"{self.model} at {self.base_url}: no valid answer after "
                       f"{self.max_retries + 1} attempts; last error: {last_reason}")

    def _attempt(self, text: str, schema: dict[str, Any] | None, images: Sequence[bytes],
                 usage: LLMUsage | None, temperature: float | None) -> Any:
        openai = self._openai
        kwargs: dict[str, Any] = {
            "model": self.model, "messages": self._messages(text, images),
            "temperature": self.temperature if temperature is None else float(temperature)}
        if self.max_output_tokens:
            kwargs["max_tokens"] = self.max_output_tokens
        fmt = self._response_format(schema)
        if fmt is not None:
            kwargs["response_format"] = fmt
        where = f"{self.model} at {self.base_url}"
        try:
            response = self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as e:
            if _connect_failure(e):
                self._connection_failed(where, "connect timed out")
            raise _Retriable(f"request timed out after {self.timeout_s:g} s") from e
        except openai.APIConnectionError as e:
            self._connection_failed(where, f"cannot connect ({type(e.__cause__ or e).__name__})")
            raise _Retriable("cannot connect") from e
        except openai.APIStatusError as e:
            code = int(e.status_code)
            detail = _error_text(e)
            if code == 400 and fmt is not None and self._fallback and _about_format(detail):
                self.mode = {"json_schema": "json_object", "json_object": "none"}.get(self.mode, "none")
                raise _Unsupported(f"server rejected response_format {fmt['type']} ({detail[:120]})") from e
            if code in (401, 403):
                hint = (f"set the environment variable {self._key_env!r}" if not self._key_set
                        else f"check the key in {self._key_env!r}")
                self.breaker.failure(f"{where} refused the request (HTTP {code}): {hint}", fatal=True)
                raise BackendUnavailable(self.breaker.reason) from e
            if code == 404:
                self.breaker.failure(
                    f"{where}: model or endpoint not found (HTTP 404: {detail[:120]}). Is the model "
                    f"served there (Ollama: `ollama pull {self.model}`) and does base_url end in /v1?",
                    fatal=True)
                raise BackendUnavailable(self.breaker.reason) from e
            if code in (408, 409, 429) or code >= 500:
                self.breaker.success()  # the server answered: it is reachable
                raise _Retriable(f"HTTP {code}: {detail[:200]}") from e
            raise LLMError(f"{where} rejected the request (HTTP {code}: {detail[:200]})") from e
        self.breaker.success()
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise _Retriable("response has no choices")
        choice = choices[0]
        finish = str(getattr(choice, "finish_reason", "") or "")
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        if isinstance(content, list):  # some servers return content parts
            content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
        content = content or ""
        if usage is not None:
            usage.output_chars += len(content)
            u = getattr(response, "usage", None)
            if u is not None:
                usage.input_tokens += int(getattr(u, "prompt_tokens", 0) or 0)
                usage.output_tokens += int(getattr(u, "completion_tokens", 0) or 0)
        if finish == "content_filter":
            raise LLMError(f"{where} filtered the answer (finish_reason content_filter); not retried")
        refusal = getattr(message, "refusal", None)
        if refusal and not content:
            raise LLMError(f"{where} refused: {str(refusal)[:200]}; not retried")
        try:
            return parse_and_validate(content, schema)
        except InvalidModelOutput as e:
            suffix = " (output hit max_output_tokens)" if finish == "length" else ""
            raise _Retriable(f"{e}{suffix}") from e

    def _connection_failed(self, where: str, what: str) -> None:
        reason = (f"{where}: {what}. Start the server (Ollama: `ollama serve`; vLLM: `vllm serve "
                  f"{self.model}`; llama.cpp: `llama-server`) or fix base_url; chunks stay queued")
        if self.breaker.failure(reason):
            raise BackendUnavailable(self.breaker.reason)

    def _sleep_before_retry(self, retry_index: int, reason: str) -> None:
        backoff_sleep(self.backoff_base_s, self.backoff_max_s, retry_index, f"openai {self.model}", reason)


def _error_text(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or json.dumps(err))
        return str(err)
    return str(getattr(e, "message", "") or e)


def _about_format(detail: str) -> bool:
    d = detail.lower()
    return any(w in d for w in ("response_format", "json_schema", "json schema", "grammar",
                                "structured", "json_object"))
