"""A node started before its database (docker compose starts them together) retries configure
instead of staying dead; a wrong setting still fails at once."""

from __future__ import annotations

import socket
import time

import pytest
from helpers import domain_id
import rclpy
from rclpy.parameter import Parameter

from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory
from vlkng_ros.nodes.common import autostart, is_transient
from vlkng_ros.nodes.merger import MergerNode

DOMAIN_ID = domain_id(84)


@pytest.fixture(scope="module")
def ros():
    rclpy.init(args=["--ros-args", "-p", "embeddings.text_backend:=hashing"], domain_id=DOMAIN_ID)
    yield
    rclpy.shutdown()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


def test_unreachable_server_is_transient_a_bad_setting_is_not():
    from vlkng_ros.core.stores.base import StoreError

    try:
        try:
            socket.create_connection(("127.0.0.1", _closed_port()), timeout=2)
        except OSError as e:
            raise StoreError("cannot reach Neo4j") from e
    except StoreError as wrapped:
        assert is_transient(wrapped)
    assert not is_transient(ValueError("perception.backend 'bogus'"))
    assert not is_transient(StoreError("Neo4j rejected the credentials"))


def test_configure_is_retried_until_the_server_answers(ros, tmp_path):
    """setup() fails twice the way an unreachable server fails (a refused connection), then
    works: the node ends up active, after real lifecycle transitions."""
    cfg = VlkngConfig()
    cfg.embeddings.text_backend = "hashing"
    mem = Memory.open(tmp_path / "mem", cfg)
    node = MergerNode(memory=mem, parameter_overrides=[Parameter("configure_retry_s", value=20.0)])
    real_setup, calls = node.setup, []

    def flaky_setup():
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise ConnectionRefusedError(111, "Connection refused")
        real_setup()

    node.setup = flaky_setup
    try:
        assert autostart(node)
        assert node.active and len(calls) == 3
        assert calls[1] - calls[0] >= 0.9 and calls[2] - calls[1] >= 1.9  # backing off
    finally:
        node.destroy_node()
        mem.close()


def test_retry_gives_up_after_configure_retry_s(ros, tmp_path):
    """A Qdrant server that never answers: configure fails, is retried, and autostart gives up
    after configure_retry_s (the node stays unconfigured, nothing half-open)."""
    node = MergerNode(parameter_overrides=[
        Parameter("memory_dir", value=str(tmp_path / "mem")),
        Parameter("stores.qdrant_url", value=f"http://127.0.0.1:{_closed_port()}"),
        Parameter("embeddings.text_backend", value="hashing"),
        Parameter("configure_retry_s", value=1.5)])
    try:
        t0 = time.monotonic()
        assert not autostart(node)
        assert time.monotonic() - t0 >= 1.5
        assert is_transient(node.configure_error), repr(node.configure_error)
        assert node.memory is None and not node.active
    finally:
        node.destroy_node()


def test_a_bad_setting_is_not_retried(ros, tmp_path):
    node = MergerNode(parameter_overrides=[
        Parameter("memory_dir", value=str(tmp_path / "mem")),
        Parameter("stoa.threshold", value="not a number"),
        Parameter("configure_retry_s", value=60.0)])
    try:
        t0 = time.monotonic()
        assert not autostart(node)
        assert time.monotonic() - t0 < 30  # at once, not after the 60 s of retries
        assert node.configure_error is not None and not is_transient(node.configure_error)
    finally:
        node.destroy_node()
