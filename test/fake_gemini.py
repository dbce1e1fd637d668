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
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PATH = re.compile(r"^/v1(?:beta)?/models/(?P<model>[^/:]+):generateContent$")
_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent as is
    delay_s: float = 0.0


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


class FakeGemini:
    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.script: list[Reply] = []
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

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
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> "FakeGemini":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                m = _PATH.match(self.path.split("?")[0])
                if not m:
                    return self._send(FakeGemini.error(404, f"no route {self.path}"))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return self._send(FakeGemini.error(400, "body is not JSON"))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with fake._lock:
                    fake.requests.append(RecordedRequest(m.group("model"), headers, body))
                    reply = fake.script.pop(0) if fake.script else FakeGemini.error(
                        500, "fake script exhausted")
                if fake.api_key is not None and headers.get("x-goog-api-key") != fake.api_key:
                    reply = FakeGemini.error(403, "API key not valid")
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = (reply.body if isinstance(reply.body, str)
                        else json.dumps(reply.body or {})).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json; charset=UTF-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeGemini":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
