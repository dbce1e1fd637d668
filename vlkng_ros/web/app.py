"""The tablet web app: one page (static/index.html + app.js, no build step) and a small JSON API,
on Starlette, served by uvicorn.

Every request needs the access token: ``Authorization: Bearer <token>``, the ``vlkng_token``
cookie (set when the page is opened once as ``/?token=<token>``), or ``?token=``. Images are
only ever read through the memory's frame store by (tour id, integer stamp): no request names a
file path, so nothing outside the frame store can be served.

API (JSON unless said otherwise):
  GET  /                       the page
  POST /api/ask                {"question", "options"?, "top_k"?} -> the answer (readable names, where
                               each frame was taken, frame image URLs)
  GET  /api/history            this session's questions and answers, newest last
  GET  /api/map                trajectories, keyframe poses, placed objects, bounds
  GET  /api/object/{id}        one object: frames, relations, position history across tours
  GET  /api/frame/{tour}/{stamp}.jpg?boxes=1&highlight=ID,..&max=640   a keyframe (JPEG)
  GET  /api/evidence/{n}.jpg   the rendered evidence image of history entry n (when the answer has one)
  POST /api/goto               {"query"} -> start "Go there" (GoTo action; 409 when it cannot)
  POST /api/goto/cancel
  GET  /api/status             the live status once
  GET  /api/events             the live status and navigation feedback, pushed (Server-Sent Events)
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (PlainTextResponse, RedirectResponse, Response,
                                 StreamingResponse)
from starlette.routing import Route

from ..core import present
from .backend import LocalBackend, NavigationUnavailable

log = logging.getLogger("vlkng.web")
STATIC = Path(__file__).resolve().parent / "static"
STATIC_FILES = {"app.js": "text/javascript", "app.css": "text/css"}  # the only static files served
COOKIE = "vlkng_token"
_STAMP_RE = re.compile(r"^[0-9]{1,20}$")
MAX_QUESTION = 500


def _json(obj: Any, status: int = 200) -> Response:
    return Response(json.dumps(obj, default=str), status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return _json({"error": message}, status)


def evidence_image_bytes(result: dict[str, Any]) -> bytes | None:
    """The rendered evidence image of an answer, when the ask engine made one (JPEG/PNG bytes,
    base64 text, or a file the memory's renderer wrote)."""
    for key in ("evidence_image", "rendered_evidence", "evidence_image_jpeg"):
        v = result.get(key)
        if not v:
            continue
        if isinstance(v, (bytes, bytearray)):
            return bytes(v)
        if isinstance(v, str):
            try:
                return base64.b64decode(v, validate=True)
            except ValueError:
                return None
    return None


def create_app(backend: LocalBackend, token: str) -> Any:
    if not token:
        raise ValueError("the web app needs an access token")
    memory = backend.memory

    def authorised(request: Request) -> bool:
        given = ""
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        given = given or request.cookies.get(COOKIE, "") or request.query_params.get("token", "")
        return bool(given) and hmac.compare_digest(given.encode(), token.encode())

    async def index(request: Request) -> Response:
        if request.query_params.get("token") and authorised(request):
            # keep the token out of the address bar and history: a cookie carries it from now on
            resp = RedirectResponse("/", status_code=303)
            resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", max_age=30 * 24 * 3600)
            return resp
        return Response((STATIC / "index.html").read_bytes(), media_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-store"})

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC_FILES:
            return _error(404, "no such file")
        return Response((STATIC / name).read_bytes(), media_type=STATIC_FILES[name],
                        headers={"Cache-Control": "no-store"})

    async def ask(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "expected a JSON body {\"question\": ...}")
        if not isinstance(body, dict):
            return _error(400, "expected a JSON object")
        question = str(body.get("question", "")).strip()
        if not question:
            return _error(400, "ask a question")
        if len(question) > MAX_QUESTION:
            return _error(400, f"question too long (at most {MAX_QUESTION} characters)")
        options = [str(o) for o in body.get("options") or []][:10]
        try:
            top_k = int(body.get("top_k") or 0)
        except (TypeError, ValueError):
            return _error(400, "top_k must be an integer")

        def work() -> dict[str, Any]:
            res = backend.ask(question, options, top_k)
            d = present.result_payload(memory, res)
            for f in d["frames"]:
                f["image"] = f"/api/frame/{f['tour_id']}/{f['stamp']}.jpg?boxes=1&highlight=" + ",".join(f["object_ids"])
            d["question"] = question
            d["asked_at"] = time.time()
            d["id"] = backend.next_answer_id()
            img = evidence_image_bytes(d)
            for key in ("evidence_image", "rendered_evidence", "evidence_image_jpeg"):
                d.pop(key, None)
            d["evidence_image"] = f"/api/evidence/{d['id']}.jpg" if img else None
            backend.remember({**d, "_evidence": img})
            return d

        try:
            d = await run_in_threadpool(work)
        except Exception as e:  # never a stack trace on the tablet: a line, and the log has the rest
            log.exception("ask failed")
            return _error(500, f"asking failed: {type(e).__name__}: {e}")
        return _json(d)

    async def history(request: Request) -> Response:
        return _json([{k: v for k, v in h.items() if not k.startswith("_")} for h in list(backend.history)])

    async def map_data(request: Request) -> Response:
        return _json(await run_in_threadpool(present.map_payload, memory))

    async def object_detail(request: Request) -> Response:
        d = await run_in_threadpool(present.object_detail, memory, request.path_params["oid"])
        if d is None:
            return _error(404, "no such object")
        for f in d["frames"]:
            f["image"] = f"/api/frame/{f['tour_id']}/{f['stamp']}.jpg?boxes=1&highlight={d['id']}"
        return _json(d)

    async def frame(request: Request) -> Response:
        tour, stamp = request.path_params["tour"], request.path_params["stamp"]
        if not _STAMP_RE.match(stamp):
            return _error(404, "no such frame")
        q = request.query_params
        boxes = q.get("boxes", "1") not in ("0", "false", "no")
        highlight = [h for h in q.get("highlight", "").split(",") if h][:50]
        try:
            max_side = max(0, min(4096, int(q.get("max", "0") or 0)))
        except ValueError:
            return _error(400, "max must be an integer")
        try:
            data = await run_in_threadpool(present.frame_jpeg, memory, tour, int(stamp), boxes, highlight, max_side)
        except (ValueError, FileNotFoundError):  # a bad tour id or a frame the store does not hold
            return _error(404, "no such frame")
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

    async def evidence(request: Request) -> Response:
        try:
            n = int(request.path_params["n"])
        except ValueError:
            return _error(404, "no such answer")
        for h in backend.history:
            if h["id"] == n and h.get("_evidence"):
                data = h["_evidence"]
                kind = "image/png" if data[:4] == b"\x89PNG" else "image/jpeg"
                return Response(data, media_type=kind)
        return _error(404, "that answer has no rendered evidence image")

    async def goto(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "expected a JSON body {\"query\": ...}")
        query = str((body or {}).get("query", "")).strip() if isinstance(body, dict) else ""
        if not query:
            return _error(400, "say where to go")
        try:
            await run_in_threadpool(backend.goto, query)
        except NavigationUnavailable as e:
            return _error(409, str(e))
        return _json({"started": True, "query": query})

    async def goto_cancel(request: Request) -> Response:
        return _json({"canceling": await run_in_threadpool(backend.cancel_goto)})

    async def status(request: Request) -> Response:
        return _json(await run_in_threadpool(backend.status))

    async def events(request: Request) -> Response:
        period = max(0.1, float(backend.cfg.web.status_period_s))

        async def stream():
            last_nav = None
            next_status = 0.0
            while not await request.is_disconnected():
                now = time.monotonic()
                nav = dict(backend.nav)
                if nav != last_nav:  # navigation feedback goes out as soon as it changes
                    last_nav = nav
                    yield f"event: navigation\ndata: {json.dumps(nav, default=str)}\n\n"
                if now >= next_status:
                    next_status = now + period
                    st = await run_in_threadpool(backend.status)
                    yield f"event: status\ndata: {json.dumps(st, default=str)}\n\n"
                await asyncio.sleep(0.1)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    routes = [
        Route("/", index), Route("/static/{name}", static),
        Route("/api/ask", ask, methods=["POST"]), Route("/api/history", history),
        Route("/api/map", map_data), Route("/api/object/{oid}", object_detail),
        Route("/api/frame/{tour}/{stamp}.jpg", frame), Route("/api/evidence/{n}.jpg", evidence),
        Route("/api/goto", goto, methods=["POST"]), Route("/api/goto/cancel", goto_cancel, methods=["POST"]),
        Route("/api/status", status), Route("/api/events", events),
    ]
    app = Starlette(routes=routes)
    denied = PlainTextResponse("vlkng: access token required (open the address printed when the web app "
                               "started, with ?token=...)", status_code=401)

    async def require_token(scope, receive, send):  # pure ASGI: checks every request, streams untouched
        if scope["type"] == "http" and not authorised(Request(scope)):
            await denied(scope, receive, send)
            return
        await app(scope, receive, send)

    require_token.state = app.state  # type: ignore[attr-defined]
    return require_token


class WebServer:
    """uvicorn in a background thread (the ROS node) or the foreground (``vlkng web``)."""

    def __init__(self, app: Starlette, host: str, port: int) -> None:
        import uvicorn

        self.config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                                     timeout_graceful_shutdown=2, lifespan="off")
        self.server = uvicorn.Server(self.config)
        self.thread = None

    def start(self, timeout_s: float = 10.0) -> None:
        import threading

        self.thread = threading.Thread(target=self.server.run, name="vlkng-web", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError(f"the web app could not listen on {self.config.host}:{self.config.port}")
            if time.monotonic() > deadline:
                raise RuntimeError("the web app did not start in time")
            time.sleep(0.05)

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        for server in getattr(self.server, "servers", []) or []:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        return int(self.config.port)

    def run(self) -> None:
        self.server.run()

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=5.0)
