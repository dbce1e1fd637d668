"""A local stand-in for an OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio), for
tests (stdlib only, runs in a thread).

Speaks ``POST /v1/chat/completions`` as the ``openai`` client sends it. Replies come from a
``script`` (one per request, in order) or, when the script is empty, from ``responder(request)``
(e.g. labels keyed by the images a request carries). Every request is recorded. Options model
servers that differ: ``json_schema=False`` / ``json_object=False`` reject those response_format
types with HTTP 400, as servers without structured output do; ``api_key`` requires that bearer key.

    with FakeOpenAI() as fake:
        fake.script = [fake.error(429), fake.ok({"objects": []})]
        ... OpenAICompatClient(base_url=fake.url, ...)
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from helpers_fake_server import FakeJSONServer, Reply


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = field(default_factory=time.monotonic)

    @property
    def content(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for m in self.body.get("messages", []):
            c = m.get("content")
            out += [{"type": "text", "text": c}] if isinstance(c, str) else list(c or [])
        return out

    @property
    def images(self) -> list[bytes]:
        out = []
        for part in self.content:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                out.append(base64.b64decode(url.split(",", 1)[1]))
        return out

    @property
    def texts(self) -> list[str]:
        return [p["text"] for p in self.content if p.get("type") == "text"]


class FakeOpenAI(FakeJSONServer):
    def __init__(self, api_key: str | None = None, json_schema: bool = True, json_object: bool = True,
                 responder: Callable[[RecordedRequest], Reply] | None = None, port: int = 0) -> None:
        super().__init__(port)
        self.api_key = api_key
        self.json_schema = json_schema
        self.json_object = json_object
        self.responder = responder
        self.script: list[Reply] = []
        self.requests: list[RecordedRequest] = []

    # --- replies ---------------------------------------------------------------------------
    @staticmethod
    def ok(payload: Any, finish_reason: str = "stop", delay_s: float = 0.0,
           prompt_tokens: int = 1200, completion_tokens: int | None = None) -> Reply:
        """A normal answer whose content is ``payload`` (JSON-encoded unless already a str)."""
        text = payload if isinstance(payload, str) else json.dumps(payload)
        out_tokens = len(text) // 4 if completion_tokens is None else completion_tokens
        return Reply(200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": out_tokens,
                      "total_tokens": prompt_tokens + out_tokens}}, delay_s)

    @staticmethod
    def error(status: int, message: str = "fake error") -> Reply:
        return Reply(status, {"error": {"message": message, "type": "fake", "code": status}})

    # --- server ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.root + "/v1"

    def handle(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        if path.rstrip("/") != "/v1/chat/completions":
            return FakeOpenAI.error(404, f"no route {path}")
        req = RecordedRequest(path, headers, body)
        with self._lock:
            self.requests.append(req)
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return FakeOpenAI.error(401, "Incorrect API key provided")
        fmt = (body.get("response_format") or {}).get("type")
        if (fmt == "json_schema" and not self.json_schema) or (fmt == "json_object" and not self.json_object):
            return FakeOpenAI.error(400, f"response_format type {fmt} is not supported")
        with self._lock:
            reply = self.script.pop(0) if self.script else None
        if reply is None:
            reply = self.responder(req) if self.responder else FakeOpenAI.error(500, "fake script exhausted")
        return reply
