"""A local stand-in for Gemini's REST API, for tests (stdlib only, runs in a thread).

Speaks ``POST /v1beta/models/{model}:generateContent`` (and ``/v1/``) as google-genai sends it (JSON body with
``contents`` and ``generationConfig``, API key in the ``x-goog-api-key`` header) and answers from
a script of responses, one per request, in order. Every request is recorded (path, headers, body)
so tests can check what the client sent.

    with FakeGemini(api_key="k") as fake:
        fake.script = [fake.error(429), fake.ok({"objects": []})]
        ... GeminiClient(base_url=fake.url, ...)
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from helpers_fake_server import FakeJSONServer, Reply

_PATH = re.compile(r"^/v1(?:beta)?/models/(?P<model>[^/:]+):generateContent$")
_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass
class RecordedRequest:
    model: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = field(default_factory=time.monotonic)

    @property
    def images(self) -> list[bytes]:
        import base64

        out = []
        for content in self.body.get("contents", []):
            for part in content.get("parts", []):
                blob = part.get("inlineData") or part.get("inline_data")
                if blob:
                    out.append(base64.urlsafe_b64decode(blob["data"] + "=" * (-len(blob["data"]) % 4)))
        return out

    @property
    def texts(self) -> list[str]:
        return [p["text"] for c in self.body.get("contents", []) for p in c.get("parts", [])
                if "text" in p]


class FakeGemini(FakeJSONServer):
    def __init__(self, api_key: str | None = None) -> None:
        super().__init__()
        self.api_key = api_key
        self.script: list[Reply] = []
        self.requests: list[RecordedRequest] = []

    # --- replies ---------------------------------------------------------------------------
    @staticmethod
    def ok(payload: Any, finish_reason: str = "STOP", delay_s: float = 0.0) -> Reply:
        """A normal answer whose text is ``payload`` (JSON-encoded unless already a str)."""
        text = payload if isinstance(payload, str) else json.dumps(payload)
        return Reply(200, {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": finish_reason, "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": len(text) // 4,
                              "totalTokenCount": 100 + len(text) // 4},
            "modelVersion": "fake-gemini"}, delay_s)

    @staticmethod
    def error(status: int, message: str = "fake error") -> Reply:
        return Reply(status, {"error": {"code": status, "message": message,
                                        "status": _STATUS.get(status, "UNKNOWN")}})

    @staticmethod
    def safety_stop() -> Reply:
        """A candidate stopped for safety: no content."""
        return Reply(200, {"candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]}],
            "usageMetadata": {"promptTokenCount": 100, "totalTokenCount": 100}})

    @staticmethod
    def prompt_blocked() -> Reply:
        return Reply(200, {"promptFeedback": {"blockReason": "SAFETY"},
                           "usageMetadata": {"promptTokenCount": 100, "totalTokenCount": 100}})

    # --- server ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.root + "/"

    def handle(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        m = _PATH.match(path)
        if not m:
            return FakeGemini.error(404, f"no route {path}")
        with self._lock:
            self.requests.append(RecordedRequest(m.group("model"), headers, body))
            reply = self.script.pop(0) if self.script else FakeGemini.error(500, "fake script exhausted")
        if self.api_key is not None and headers.get("x-goog-api-key") != self.api_key:
            reply = FakeGemini.error(403, "API key not valid")
        return reply
