#!/usr/bin/env bash
# Check the Neo4j store's Cypher: every statement in vlkng_ros/core/stores/cypher.py is parsed by
# Neo4j's own parser (npm @neo4j-cypher/language-support, installed into build/cypher-lint on
# first use; needs node + npm) and the whole statement set is executed on FalkorDB.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python -m pytest -q -rs test/test_neo4j_cypher.py "$@"
