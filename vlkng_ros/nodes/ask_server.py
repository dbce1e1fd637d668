"""GER query node: the ``ask`` service (vlkng_msgs/srv/Ask) over ``AskEngine``.

The service lives in its own mutually exclusive callback group, so with a multi-threaded
executor asking never waits for ingest callbacks (and one question is answered at a time, which
keeps the LLM's usage predictable). The engine only reads the memory.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from vlkng_msgs.srv import Ask

from .. import conversions as conv
from ..core.ask.types import AskResult
from ..core.memory import Memory
from .common import VlkngLifecycleNode, param, spin_main, warm_up

LATENCY_WINDOW = 1000  # the last answers' latencies kept for statistics

PARAMS = {
    "service_name": ("ask", "Name of the Ask service (relative: namespaced)."),
}


class AskServerNode(VlkngLifecycleNode):
    def __init__(self, memory: Memory | None = None, **kwargs: Any) -> None:
        super().__init__("vlkng_ask", PARAMS, memory, **kwargs)
        self.latencies_s: deque[float] = deque(maxlen=LATENCY_WINDOW)  # bounded: a server runs for months

    def setup(self) -> None:
        assert self.memory is not None
        from ..core.ask.engine import AskEngine
        from ..core.llm.registry import make_llm

        self.engine = AskEngine(self.memory, self.cfg, make_llm(self.cfg.llm))
        warm_up(self.memory)
        self.engine.warm_up()  # the first /ask must not pay for building caches
        self.group = MutuallyExclusiveCallbackGroup()
        self.keep(self.create_service(Ask, param(self, "service_name"), self._on_ask,
                                      callback_group=self.group))

    def _on_ask(self, request: Ask.Request, response: Ask.Response) -> Ask.Response:
        t0 = time.perf_counter()
        if not self.active:
            result = AskResult(False, "the ask server is not active (lifecycle state)")
        else:
            try:
                result = self.engine.ask(conv.ask_request_from_msg(request))
            except Exception as e:  # never leave a client hanging
                self.get_logger().error(f"ask failed: {type(e).__name__}: {e}")
                result = AskResult(False, f"internal error: {type(e).__name__}: {e}")
        self.latencies_s.append(time.perf_counter() - t0)
        return conv.ask_result_to_msg(result, response)


def main(args: list[str] | None = None) -> int:
    return spin_main(AskServerNode, args)
