"""The HTTP plumbing shared by the fake model servers (helpers_gemini, helpers_openai): a threaded
stdlib server on 127.0.0.1 that hands every POST (path, lower-cased headers, parsed JSON body)
to ``handle`` and sends the :class:`Reply` it returns."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent as is
    delay_s: float = 0.0
    hang_up: bool = False  # close the connection without answering


class FakeJSONServer:
    def __init__(self, port: int = 0) -> None:
        self.port = port  # 0 = any free port
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handle(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        raise NotImplementedError

    @staticmethod
    def bad_body() -> Reply:
        return Reply(400, {"error": {"code": 400, "message": "body is not JSON"}})

    @property
    def root(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return self._send(fake.bad_body())
                headers = {k.lower(): v for k, v in self.headers.items()}
                self._send(fake.handle(self.path.split("?")[0], headers, body))

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.hang_up:
                    self.close_connection = True
                    return
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

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
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

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
