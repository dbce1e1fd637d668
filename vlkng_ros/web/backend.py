"""What the web app talks to: asking, "Go there" and the live status (no web framework, no rclpy).

``LocalBackend`` serves ``vlkng web --memory M``: it asks the memory in-process and reports what
the memory's stores show; it cannot drive a robot (no ROS), and says so. The ``vlkng_web`` node
(nodes/web.py) subclasses it: navigation through the GoTo action, status from the suite's topics.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from ..core.ask.types import AskRequest, AskResult
from ..core.config import VlkngConfig
from ..core.memory import Memory

log = logging.getLogger("vlkng.web")
TOKEN_FILE = "web_token"
TOKEN_ENV = "VLKNG_WEB_TOKEN"


class NavigationUnavailable(RuntimeError):
    """Go there cannot work here (no ROS, no navigator): the message says what would."""


def resolve_token(cfg: VlkngConfig, memory_dir: Path, environ: dict[str, str] | None = None) -> tuple[str, bool]:
    """The access token and whether it was generated now (then the caller prints it, once).

    Order: ``web.token`` in the config, ``$VLKNG_WEB_TOKEN``, the memory's ``web_token`` file,
    else a new random token written to that file (mode 0600)."""
    import os

    env = os.environ if environ is None else environ
    if cfg.web.token:
        return cfg.web.token, False
    if env.get(TOKEN_ENV):
        return env[TOKEN_ENV], False
    path = Path(memory_dir) / TOKEN_FILE
    if path.is_file():
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token, False
    token = secrets.token_urlsafe(24)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token, True


class Rates:
    """Per-second rates of monotonically growing counters, between consecutive samples."""

    def __init__(self) -> None:
        self._last: tuple[float, dict[str, float]] | None = None

    def update(self, counters: dict[str, float]) -> dict[str, float]:
        now = time.monotonic()
        out = {k: 0.0 for k in counters}
        if self._last is not None and now > self._last[0]:
            dt = now - self._last[0]
            out = {k: max(0.0, (v - self._last[1].get(k, v)) / dt) for k, v in counters.items()}
        self._last = (now, dict(counters))
        return out


class LocalBackend:
    """Ask in-process; status from the memory's stores; no navigation."""

    navigation_hint = ("Go there needs the robot: serve the page from the ROS suite "
                       "('vlkng run --web' or the vlkng_web node), which sends the GoTo action.")

    def __init__(self, memory: Memory, cfg: VlkngConfig, llm: Any = None, warm: bool = True,
                 engine: Any = None) -> None:
        from ..core.ask.engine import AskEngine
        from ..core.llm.registry import make_llm

        self.memory = memory
        self.cfg = cfg
        # in the suite the ask server's engine (warm, caches shared) answers the page too
        self.engine = engine or AskEngine(memory, cfg, llm if llm is not None else make_llm(cfg.llm))
        self.history: deque[dict[str, Any]] = deque(maxlen=max(1, cfg.web.max_history))
        self.nav: dict[str, Any] = {"state": "idle"}
        self.latencies_s: deque[float] = deque(maxlen=20)
        self._rates = Rates()
        self._lock = threading.Lock()
        self._answers = 0
        if warm and engine is None:
            self.engine.warm_up()

    # --- asking ------------------------------------------------------------------------------
    def ask(self, question: str, options: list[str] | None = None, top_k: int = 0) -> AskResult:
        t0 = time.perf_counter()
        res = self.engine.ask(AskRequest(question, list(options or []), top_k))  # 0: ask.top_k
        self.latencies_s.append(time.perf_counter() - t0)
        return res

    # --- navigation ----------------------------------------------------------------------------
    @property
    def can_navigate(self) -> bool:
        return False

    def goto(self, query: str) -> None:
        raise NavigationUnavailable(self.navigation_hint)

    def cancel_goto(self) -> bool:
        return False

    # --- live status ---------------------------------------------------------------------------
    def counters(self) -> dict[str, float]:
        """Growing counts the rates come from (subclasses add frames received)."""
        g = self.memory.graph
        return {"keyframes": float(g.count_keyframes())}

    def status(self) -> dict[str, Any]:
        """What the page's status bar shows; cheap enough to call every second."""
        with self._lock:
            g = self.memory.graph
            counters = self.counters()
            rates = self._rates.update(counters)
            merged = len(g.merged_chunks())
            perceived = self._perceived_chunks()
            keyframes = int(counters["keyframes"])
            chunk = max(1, self.cfg.chunk_size)
            st: dict[str, Any] = {
                "time": time.time(),
                "frames_per_s": round(rates.get("frames", 0.0), 2) if "frames" in rates else None,
                "keyframes_per_s": round(rates["keyframes"], 2),
                "keyframes": keyframes,
                "chunks_queued": max(0, keyframes // chunk - perceived),  # full chunks not yet perceived
                "chunks_perceived": perceived,
                "chunks_merged": merged,
                "objects": g.count_objects(),
                "tours": len(g.tours()),
                "model_latency_s": None,
                "ask_latency_s": round(sorted(self.latencies_s)[len(self.latencies_s) // 2], 3) if self.latencies_s else None,
                "warnings": self.warnings(),
                "navigation": dict(self.nav),
                "can_navigate": self.can_navigate,
            }
            return st

    def _perceived_chunks(self) -> int:
        d = self.memory.chunks_dir
        return sum(1 for _ in d.glob("*/*.json")) if d.is_dir() else 0

    def warnings(self) -> list[str]:
        return []

    def next_answer_id(self) -> int:
        with self._lock:
            self._answers += 1
            return self._answers

    def remember(self, entry: dict[str, Any]) -> None:
        self.history.append(entry)
