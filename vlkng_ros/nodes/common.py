"""What every vlkng node shares: parameters, the lifecycle base, the memory, and main().

Nodes are thin: they declare parameters (every VlkngConfig leaf plus their own, each with a
default and a description), convert messages (``vlkng_ros.conversions``) and call the core.
Nodes that hold models or database connections are lifecycle nodes (``rclpy.lifecycle``; a plain
Node with the same callbacks where it is unavailable): configure opens the memory and the
models, activate starts processing, cleanup/shutdown release everything.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.action import ActionClient as _RclpyActionClient
from rclpy.node import Node

from ..core.config import VlkngConfig
from ..core.memory import Memory

try:  # rclpy >= Humble
    from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

    HAVE_LIFECYCLE = True
except ImportError:  # pragma: no cover - very old rclpy: same callbacks, driven by autostart
    HAVE_LIFECYCLE = False
    import enum

    class TransitionCallbackReturn(enum.IntEnum):  # type: ignore[no-redef]
        SUCCESS = 97
        FAILURE = 98
        ERROR = 99

    class LifecycleNode(Node):  # type: ignore[no-redef]
        def trigger_configure(self) -> Any:
            return self.on_configure(None)

        def trigger_activate(self) -> Any:
            return self.on_activate(None)

        def trigger_deactivate(self) -> Any:
            return self.on_deactivate(None)

        def trigger_cleanup(self) -> Any:
            return self.on_cleanup(None)

        def trigger_shutdown(self) -> Any:
            return self.on_shutdown(None)

# Node-level parameters that are not part of VlkngConfig: (default, description).
ParamSpec = dict[str, tuple[Any, str]]
COMMON_PARAMS: ParamSpec = {
    "memory_dir": ("mem", "Memory directory (graph, vectors, frames, chunk queue)."),
    "autostart": (True, "Configure and activate on start (no lifecycle manager needed)."),
    "configure_retry_s": (60.0, "With autostart: keep retrying a failed configure (e.g. a Neo4j "
                                "or Qdrant server still starting) for this long, backing off "
                                "1, 2, 4 .. 10 s; 0 = try once."),
}


def declare_parameters(node: Node, extra: ParamSpec) -> None:
    """Declare every VlkngConfig leaf and the node's own parameters, all described.

    Config leaves use dynamic typing (YAML may say ``1`` for a float); the value is coerced to
    the field's type, with a clear error, when the config is read."""
    for name, value, description in VlkngConfig().iter_parameters():
        node.declare_parameter(name, value, ParameterDescriptor(description=description,
                                                                dynamic_typing=True))
    for name, (value, description) in {**COMMON_PARAMS, **extra}.items():
        node.declare_parameter(name, value, ParameterDescriptor(description=description))


def config_from_node(node: Node) -> VlkngConfig:
    cfg = VlkngConfig()
    for name, _, _ in VlkngConfig().iter_parameters():
        cfg.set_dotted(name, node.get_parameter(name).value)
    return cfg


def param(node: Node, name: str) -> Any:
    return node.get_parameter(name).value


class VlkngLifecycleNode(LifecycleNode):
    """Lifecycle base: opens (or borrows) the memory on configure; ``active`` gates callbacks.

    Subclasses implement ``setup()`` (create publishers, subscriptions, models; called after the
    memory is open) and may override ``teardown()`` and ``on_activated()``. A node that holds no
    memory (the navigator: it asks the ask server over DDS) sets ``needs_memory = False``."""

    needs_memory = True

    def __init__(self, name: str, extra_params: ParamSpec, memory: Memory | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        declare_parameters(self, extra_params)
        self._borrowed_memory = memory
        self.memory: Memory | None = None
        self.cfg = VlkngConfig()
        self.active = False
        self.configure_error: BaseException | None = None  # why the last configure failed
        self._entities: list[Any] = []
        self._lock = threading.RLock()

    # --- subclass hooks --------------------------------------------------------------------
    def setup(self) -> None:
        raise NotImplementedError

    def teardown(self) -> None:
        """Release what setup() made (entities are destroyed by the base)."""

    def on_activated(self) -> None:
        """Called when processing starts (resume queued work here)."""

    # --- lifecycle callbacks ---------------------------------------------------------------
    def on_configure(self, state: Any) -> TransitionCallbackReturn:
        try:
            self.configure_error = None
            self.cfg = config_from_node(self)
            if self._borrowed_memory is not None:
                self.memory = self._borrowed_memory
            elif self.needs_memory:
                self.memory = Memory.open(param(self, "memory_dir"), self.cfg)
            self.setup()
        except Exception as e:  # a bad parameter or an unreachable DB: say it, stay unconfigured
            self.configure_error = e
            self.get_logger().error(f"configure failed: {type(e).__name__}: {e}")
            self._release()
            return TransitionCallbackReturn.FAILURE
        self.get_logger().info("configured")
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: Any) -> TransitionCallbackReturn:
        self.active = True
        try:
            self.on_activated()
        except Exception as e:
            self.get_logger().error(f"activate failed: {type(e).__name__}: {e}")
            self.active = False
            return TransitionCallbackReturn.FAILURE
        self.get_logger().info("active")
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: Any) -> TransitionCallbackReturn:
        self.active = False
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: Any) -> TransitionCallbackReturn:
        self.active = False
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: Any) -> TransitionCallbackReturn:
        self.active = False
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: Any) -> TransitionCallbackReturn:
        self.active = False
        self._release()
        return TransitionCallbackReturn.SUCCESS

    # --- helpers ---------------------------------------------------------------------------
    def keep(self, entity: Any) -> Any:
        """Remember a publisher/subscription/timer/service so cleanup destroys it."""
        self._entities.append(entity)
        return entity

    def _release(self) -> None:
        with self._lock:
            try:
                self.teardown()
            except Exception as e:
                self.get_logger().warning(f"teardown: {type(e).__name__}: {e}")
            for entity in reversed(self._entities):
                try:
                    self._destroy_entity(entity)
                except Exception:
                    pass  # an entity of a node that is going away anyway
            self._entities.clear()
            if self.memory is not None and self._borrowed_memory is None:
                self.memory.close()
            self.memory = None

    def _destroy_entity(self, entity: Any) -> None:
        """Through the node's own destroy_* (it also drops a subscription's or publisher's QoS
        event handlers from the node's waitables: destroyed behind the node's back, a spinning
        executor fails on them with InvalidHandle); action servers/clients remove themselves."""
        from rclpy.client import Client
        from rclpy.publisher import Publisher
        from rclpy.service import Service
        from rclpy.subscription import Subscription
        from rclpy.timer import Timer

        for kind, destroy in ((Publisher, self.destroy_publisher), (Subscription, self.destroy_subscription),
                              (Client, self.destroy_client), (Service, self.destroy_service),
                              (Timer, self.destroy_timer)):
            if isinstance(entity, kind):
                destroy(entity)
                return
        entity.destroy()

    def destroy_node(self) -> None:
        self.active = False
        self._release()
        super().destroy_node()


class ActionClient(_RclpyActionClient):
    """rclpy's ActionClient, safe to create while an executor spins its node.

    rclpy (9.1 of Kilted here; ros2/rclpy#1589) adds the client to its node, which wakes the
    executor, before it creates the lock that the executor's wait-set pass takes: the executor
    thread then dies of AttributeError '_lock', and nothing on it runs again. A node configured
    while spinning (a lifecycle manager's configure, a test that starts the suite after its
    executor) creates its clients so; on a loaded machine CI lost a whole suite to it. The lock
    (and logger) exist before the client joins the node here, and the one lock is kept."""

    def __init__(self, node: Node, *args: Any, **kwargs: Any) -> None:
        self.__dict__["_vlkng_lock"] = threading.Lock()
        self._logger = node.get_logger().get_child("action_client")
        super().__init__(node, *args, **kwargs)

    @property
    def _lock(self) -> Any:
        return self.__dict__["_vlkng_lock"]

    @_lock.setter
    def _lock(self, _value: Any) -> None:  # rclpy's late assignment: keep the lock already in use
        pass


def warm_up(memory: Memory) -> None:
    """Load the embedding model now (configure), not in the first callback: a model loading
    mid-tour holds the interpreter for seconds and the camera's best-effort frames are lost."""
    memory.text_embedder.embed_texts(["warm up"])
    _ = memory.image_embedder


# errors that say "not reachable (yet)": a server still starting, not a wrong setting
_TRANSIENT_NAMES = {"ServiceUnavailable", "SessionExpired", "ConnectError", "ConnectTimeout",
                    "ResponseHandlingException", "ReadTimeout"}


def is_transient(error: BaseException | None) -> bool:
    """True if ``error`` (or what caused it) is a connection failure worth retrying."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, OSError) or type(error).__name__ in _TRANSIENT_NAMES:
            return True
        error = error.__cause__ or error.__context__
        seen += 1
    return False


def autostart(node: Node) -> bool:
    """Configure and activate a lifecycle node when its ``autostart`` parameter is true.

    A configure that fails because a server is not reachable yet is retried for
    ``configure_retry_s`` (compose starts Neo4j and the nodes together); any other failure
    (a bad parameter, wrong credentials) fails at once."""
    if not isinstance(node, VlkngLifecycleNode) or not param(node, "autostart"):
        return True
    deadline = time.monotonic() + max(0.0, float(param(node, "configure_retry_s")))
    delay = 1.0
    while node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
        left = deadline - time.monotonic()
        if left <= 0 or not is_transient(node.configure_error):
            return False
        wait = min(delay, left)
        node.get_logger().warning(f"configure failed; retrying in {wait:.0f} s "
                                  f"(configure_retry_s: {left:.0f} s left)")
        time.sleep(wait)
        delay = min(delay * 2, 10.0)
    return node.trigger_activate() == TransitionCallbackReturn.SUCCESS


def spin_until_shutdown(executor: Any) -> None:
    """``executor.spin()`` until Ctrl-C or a shutdown. Ctrl-C may shut the context down between
    the executor's "context ok?" check and its next wait set, which rclpy then refuses (RCLError
    "the given context is not valid"): that is the stop asked for, not a fault (a launched
    ``vlkng_suite`` exited 1 with that traceback on a loaded machine). Anything raised while the
    context lives is a fault and propagates."""
    from rclpy.executors import ExternalShutdownException

    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if executor.context.ok():
            raise


def spin_main(make_node: Callable[[], Node], args: list[str] | None = None) -> int:
    """main() of one node (the ros2/demos idiom), with a multi-threaded executor."""
    from rclpy.executors import MultiThreadedExecutor

    rclpy.init(args=args)
    node = make_node()
    try:
        if not autostart(node):
            node.get_logger().error("could not start (see above); waiting for a lifecycle manager")
        executor = MultiThreadedExecutor()
        executor.add_node(node)
        spin_until_shutdown(executor)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
