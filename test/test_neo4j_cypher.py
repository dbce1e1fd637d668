"""The Neo4j store's Cypher: only fixed, parameterised statements from cypher.py, every one of them
executed on FalkorDB by a workload, and every one parsed by Neo4j's own Cypher parser (the npm
package @neo4j-cypher/language-support) for both Cypher 5 and Cypher 25 when node/npm can
install it (skipped with the reason otherwise)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers_stores import (falkordb_server, falkordb_skip_reason, make_keyframe, make_object,
                             make_relation)
from vlkng_ros.core.stores import cypher
from vlkng_ros.core.stores.neo4j_store import Neo4jGraphStore

LINTER_PACKAGE = "@neo4j-cypher/language-support@2.0.0-next.38"
LINT_DIR = Path(os.environ.get("VLKNG_CYPHER_LINT_DIR",
                               Path(__file__).resolve().parents[1] / "build" / "cypher-lint"))

LINT_SCRIPT = r"""
import { lintCypherQuery, isNotParamError } from '@neo4j-cypher/language-support';
import { readFileSync } from 'node:fs';
const queries = JSON.parse(readFileSync(0, 'utf8'));
const out = {};
for (const [name, q] of Object.entries(queries)) {
  out[name] = lintCypherQuery(q, {}).diagnostics.filter(isNotParamError)
    .map(d => `${d.severity === 1 ? 'error' : 'warning'}: ${d.message}`);
}
console.log(JSON.stringify(out));
"""


class RecordingRunner:
    """Wraps a runner and records every statement with its parameters."""

    def __init__(self, inner) -> None:
        self.inner, self.dialect, self.target = inner, inner.dialect, inner.target
        self.calls: list[tuple[str, dict]] = []

    def read(self, query, params):
        self.calls.append((query, params))
        return self.inner.read(query, params)

    def write(self, work):
        return self.inner.write(lambda tx: work(_RecordingTx(tx, self.calls)))

    def schema(self, statements):
        self.calls.extend((s, {}) for s in statements)
        self.inner.schema(statements)

    def close(self):
        self.inner.close()


class _RecordingTx:
    def __init__(self, tx, calls) -> None:
        self.tx, self.calls = tx, calls

    def run(self, query, params):
        self.calls.append((query, params))
        return self.tx.run(query, params)


def test_every_statement_is_fixed_parameterised_and_exercised():
    server = falkordb_server()
    if server is None:
        pytest.skip(falkordb_skip_reason())
    runner = RecordingRunner(server.runner("vlkng_cypher_workload"))
    store = Neo4jGraphStore(namespace="lint", runner=runner)
    evil = '"); MATCH (n) DETACH DELETE n //'
    try:
        store.upsert_keyframes([make_keyframe("t", 1), make_keyframe("t", 2)])
        store.apply_merge("t#000000", [make_object("a", evil, [("t", 1)], (0.0, 0.0)),
                                       make_object("b", "table", [("t", 2)])],
                          [make_relation("a", evil, "b", [1])])
        store.apply_merge("t#000000", [], [])
        store.set_meta("k", evil)
        store.get_meta("k"), store.get_keyframe("t", 1), store.keyframes(), store.keyframes("t")
        store.count_keyframes(), store.count_keyframes("t"), store.tours(), store.chunk_merged("x")
        store.merged_chunks(), store.merged_chunks("t"), store.get_objects(["a"]), list(store.iter_objects())
        store.count_objects(), store.objects_near(0, 0, 1), store.objects_by_label([evil])
        store.objects_in_frames([("t", 1)]), store.recent_objects("t", 0), store.relations_of(["a"])
        list(store.iter_relations()), store.count_relations()
    finally:
        runner.inner.delete_graph()
        store.close()
    known = set(cypher.ALL_QUERIES.values()) | set(cypher.SCHEMA["falkordb"])
    for query, params in runner.calls:
        assert query in known, f"statement not from cypher.py: {query!r}"
        used = set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", query))
        assert used <= set(params), f"missing parameters {used - set(params)} for {query!r}"
        if query in cypher.ALL_QUERIES.values():
            assert params.get("ns") == "lint"  # everything is scoped by namespace
    executed = {q for q, _ in runner.calls}
    assert sorted(n for n, q in cypher.ALL_QUERIES.items() if q not in executed) == []


def _linter_dir() -> Path:
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip("node/npm not installed: Neo4j's Cypher parser cannot be run")
    marker = LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support" / "package.json"
    if not marker.exists():
        LINT_DIR.mkdir(parents=True, exist_ok=True)
        if not (LINT_DIR / "package.json").exists():
            (LINT_DIR / "package.json").write_text('{"name": "vlkng-cypher-lint", "private": true}')
        try:
            proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                                   LINTER_PACKAGE], cwd=LINT_DIR, capture_output=True, text=True,
                                  timeout=240)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {LINTER_PACKAGE} timed out (no registry access?)")
        if proc.returncode != 0 or not marker.exists():
            pytest.skip(f"npm install {LINTER_PACKAGE} failed: {proc.stderr.strip()[-300:]}")
    (LINT_DIR / "lint.mjs").write_text(LINT_SCRIPT)
    return LINT_DIR


def _lint(queries: dict[str, str]) -> dict[str, list[str]]:
    lint_dir = _linter_dir()
    proc = subprocess.run(["node", "lint.mjs"], cwd=lint_dir, input=json.dumps(queries),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-1000:]
    return json.loads(proc.stdout)


def test_neo4j_parser_accepts_every_statement():
    queries = dict(cypher.ALL_QUERIES)
    queries.update({f"SCHEMA[neo4j][{i}]": s for i, s in enumerate(cypher.SCHEMA["neo4j"])})
    queries.update({f"{name} (CYPHER 25)": f"CYPHER 25 {q}" for name, q in list(queries.items())})
    queries["control: typo"] = "MATCH (n) RETRN n"  # proves the linter does report errors
    report = _lint(queries)
    assert any("RETRN" in m for m in report.pop("control: typo"))
    problems = {name: msgs for name, msgs in report.items() if msgs}
    assert problems == {}
