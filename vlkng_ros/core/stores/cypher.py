"""Every Cypher statement the Neo4j graph store runs, in one place.

Rules: values are ALWAYS parameters (``$name``); no query is ever built from user data. The
node labels and relationship types below are fixed constants. Every node carries ``ns`` (the
site namespace) so several robots/sites can share one server; every lookup starts from an
index on ``ns`` plus the looked-up property.

Graph model::

    (:VlkngObject {ns, id, label, x, y, last_seen_ns, data})      data = ObjectNode JSON
    (:VlkngKeyframe {ns, tour_id, stamp_ns, data})                 data = Keyframe JSON; nodes made
                                                                    by an observation before the
                                                                    keyframe was upserted have no data
    (:VlkngLabel {ns, name})                                       lower-cased label / labels_seen
    (:VlkngChunk {ns, id, tour_id})                                a merged chunk
    (:VlkngMeta {ns, key, value})
    (o)-[:VLKNG_SEEN]->(k:VlkngKeyframe)                           one per observed keyframe
    (o)-[:VLKNG_LABELED]->(l:VlkngLabel)
    (s)-[:VLKNG_REL {predicate, stamps, tour_id}]->(o)             spatial relation

Dialects. The statements in this module run unchanged on Neo4j 5 and on FalkorDB (whose Cypher
engine the test suite uses because no Neo4j server runs in CI), EXCEPT the schema statements:
``SCHEMA["neo4j"]`` (``CREATE CONSTRAINT/INDEX ... IF NOT EXISTS``, composite uniqueness
constraints) and ``SCHEMA["falkordb"]`` (``CREATE INDEX FOR ... ON ...``, no IF NOT EXISTS, no
composite uniqueness). What therefore stays untested against a real Neo4j here: the Neo4j schema
statements (only parsed by Neo4j's own parser when test_neo4j_cypher.py can install it), the
planner actually choosing those indexes, constraint violations under concurrent writers, and
the driver's transaction retries. Set VLKNG_TEST_NEO4J_URI to run the contract suite on a server.
"""

from __future__ import annotations

SCHEMA: dict[str, list[str]] = {
    "neo4j": [
        "CREATE CONSTRAINT vlkng_object_key IF NOT EXISTS FOR (n:VlkngObject) "
        "REQUIRE (n.ns, n.id) IS UNIQUE",
        "CREATE CONSTRAINT vlkng_keyframe_key IF NOT EXISTS FOR (n:VlkngKeyframe) "
        "REQUIRE (n.ns, n.tour_id, n.stamp_ns) IS UNIQUE",
        "CREATE CONSTRAINT vlkng_label_key IF NOT EXISTS FOR (n:VlkngLabel) "
        "REQUIRE (n.ns, n.name) IS UNIQUE",
        "CREATE CONSTRAINT vlkng_chunk_key IF NOT EXISTS FOR (n:VlkngChunk) "
        "REQUIRE (n.ns, n.id) IS UNIQUE",
        "CREATE CONSTRAINT vlkng_meta_key IF NOT EXISTS FOR (n:VlkngMeta) "
        "REQUIRE (n.ns, n.key) IS UNIQUE",
        "CREATE INDEX vlkng_object_x IF NOT EXISTS FOR (n:VlkngObject) ON (n.ns, n.x)",
        "CREATE INDEX vlkng_object_y IF NOT EXISTS FOR (n:VlkngObject) ON (n.ns, n.y)",
        "CREATE INDEX vlkng_object_seen IF NOT EXISTS FOR (n:VlkngObject) ON (n.ns, n.last_seen_ns)",
        "CREATE INDEX vlkng_chunk_tour IF NOT EXISTS FOR (n:VlkngChunk) ON (n.ns, n.tour_id)",
    ],
    # FalkorDB: single-property range indexes; "already indexed" errors are ignored by the runner.
    "falkordb": [
        "CREATE INDEX FOR (n:VlkngObject) ON (n.id, n.ns, n.x, n.y, n.last_seen_ns)",
        "CREATE INDEX FOR (n:VlkngKeyframe) ON (n.tour_id, n.stamp_ns, n.ns)",
        "CREATE INDEX FOR (n:VlkngLabel) ON (n.name, n.ns)",
        "CREATE INDEX FOR (n:VlkngChunk) ON (n.id, n.ns, n.tour_id)",
        "CREATE INDEX FOR (n:VlkngMeta) ON (n.key, n.ns)",
    ],
}

# --- keyframes ------------------------------------------------------------------------------
UPSERT_KEYFRAMES = """
UNWIND $rows AS row
MERGE (k:VlkngKeyframe {ns: $ns, tour_id: row.tour_id, stamp_ns: row.stamp_ns})
SET k.data = row.data
"""

GET_KEYFRAME = """
MATCH (k:VlkngKeyframe {ns: $ns, tour_id: $tour_id, stamp_ns: $stamp_ns})
WHERE k.data IS NOT NULL
RETURN k.data AS data
"""

KEYFRAMES_ALL = """
MATCH (k:VlkngKeyframe {ns: $ns})
WHERE k.data IS NOT NULL
RETURN k.data AS data, k.tour_id AS tour_id, k.stamp_ns AS stamp_ns
ORDER BY tour_id, stamp_ns
"""

KEYFRAMES_OF_TOUR = """
MATCH (k:VlkngKeyframe {ns: $ns, tour_id: $tour_id})
WHERE k.data IS NOT NULL
RETURN k.data AS data, k.stamp_ns AS stamp_ns
ORDER BY stamp_ns
"""

COUNT_KEYFRAMES_ALL = """
MATCH (k:VlkngKeyframe {ns: $ns})
WHERE k.data IS NOT NULL
RETURN count(k) AS n
"""

COUNT_KEYFRAMES_OF_TOUR = """
MATCH (k:VlkngKeyframe {ns: $ns, tour_id: $tour_id})
WHERE k.data IS NOT NULL
RETURN count(k) AS n
"""

TOURS = """
MATCH (k:VlkngKeyframe {ns: $ns})
WHERE k.data IS NOT NULL
RETURN DISTINCT k.tour_id AS tour_id
ORDER BY tour_id
"""

# --- merge bookkeeping ----------------------------------------------------------------------
CHUNK_MERGED = """
MATCH (c:VlkngChunk {ns: $ns, id: $chunk_id})
RETURN c.id AS id
"""

MERGED_CHUNKS_ALL = """
MATCH (c:VlkngChunk {ns: $ns})
RETURN c.id AS id
"""

MERGED_CHUNKS_OF_TOUR = """
MATCH (c:VlkngChunk {ns: $ns, tour_id: $tour_id})
RETURN c.id AS id
"""

EXISTING_OBJECT_IDS = """
MATCH (n:VlkngObject {ns: $ns})
WHERE n.id IN $ids
RETURN n.id AS id
"""

RELATION_STAMPS = """
UNWIND $keys AS key
MATCH (s:VlkngObject {ns: $ns, id: key.subject})-[e:VLKNG_REL]->(t:VlkngObject {ns: $ns, id: key.object})
WHERE e.predicate = key.predicate
RETURN s.id AS subject, e.predicate AS predicate, t.id AS object, e.stamps AS stamps,
       e.tour_id AS tour_id
"""

# The whole merge is this ONE statement (after the reads above, in the same transaction): on
# Neo4j the managed transaction makes it atomic, on FalkorDB a failing statement is undone.
# Relation stamps arrive already unioned (read with RELATION_STAMPS in the same transaction).
APPLY_MERGE = """
CREATE (c:VlkngChunk {ns: $ns, id: $chunk_id, tour_id: $tour_id})
WITH c
OPTIONAL MATCH (gone:VlkngObject {ns: $ns})
WHERE gone.id IN $removed_ids
DETACH DELETE gone
WITH c, count(*) AS removed
OPTIONAL MATCH (old:VlkngObject {ns: $ns})-[r:VLKNG_SEEN|VLKNG_LABELED]->()
WHERE old.id IN $object_ids
DELETE r
WITH count(*) AS deleted
FOREACH (o IN $objects |
  MERGE (n:VlkngObject {ns: $ns, id: o.id})
  SET n.label = o.label, n.x = o.x, n.y = o.y, n.last_seen_ns = o.last_seen_ns, n.data = o.data
  FOREACH (f IN o.frames |
    MERGE (k:VlkngKeyframe {ns: $ns, tour_id: f.tour_id, stamp_ns: f.stamp_ns})
    MERGE (n)-[:VLKNG_SEEN]->(k))
  FOREACH (name IN o.labels |
    MERGE (l:VlkngLabel {ns: $ns, name: name})
    MERGE (n)-[:VLKNG_LABELED]->(l)))
WITH count(*) AS written
UNWIND $relations AS rel
MATCH (s:VlkngObject {ns: $ns, id: rel.subject})
WITH rel, s
MATCH (t:VlkngObject {ns: $ns, id: rel.object})
MERGE (s)-[e:VLKNG_REL {predicate: rel.predicate}]->(t)
SET e.stamps = rel.stamps, e.tour_id = rel.tour_id
RETURN count(e) AS relations
"""

# --- objects --------------------------------------------------------------------------------
GET_OBJECTS = """
MATCH (n:VlkngObject {ns: $ns})
WHERE n.id IN $ids
RETURN n.id AS id, n.data AS data
"""

OBJECTS_PAGE = """
MATCH (n:VlkngObject {ns: $ns})
WHERE n.id > $after
RETURN n.id AS id, n.data AS data
ORDER BY id
LIMIT $limit
"""

COUNT_OBJECTS = """
MATCH (n:VlkngObject {ns: $ns})
RETURN count(n) AS n
"""

# Range predicates on the indexed x (and y) narrow the candidates; exact distance after.
OBJECTS_NEAR = """
MATCH (n:VlkngObject {ns: $ns})
WHERE n.x >= $x_min AND n.x <= $x_max AND n.y >= $y_min AND n.y <= $y_max
WITH n, (n.x - $x) * (n.x - $x) + (n.y - $y) * (n.y - $y) AS d2
WHERE d2 <= $r2
RETURN n.id AS id, n.data AS data, d2
ORDER BY d2, id
LIMIT $limit
"""

OBJECTS_BY_LABEL = """
MATCH (l:VlkngLabel {ns: $ns})
WHERE l.name IN $labels
MATCH (l)<-[:VLKNG_LABELED]-(n:VlkngObject)
WITH DISTINCT n
RETURN n.id AS id, n.data AS data, n.last_seen_ns AS last_seen_ns
ORDER BY last_seen_ns DESC, id
LIMIT $limit
"""

OBJECTS_IN_FRAMES = """
UNWIND $frames AS f
MATCH (k:VlkngKeyframe {ns: $ns, tour_id: f.tour_id, stamp_ns: f.stamp_ns})<-[:VLKNG_SEEN]-(n:VlkngObject)
RETURN k.tour_id AS tour_id, k.stamp_ns AS stamp_ns, n.id AS id
"""

RECENT_OBJECTS = """
MATCH (k:VlkngKeyframe {ns: $ns, tour_id: $tour_id})
WHERE k.stamp_ns >= $since_ns
MATCH (k)<-[:VLKNG_SEEN]-(n:VlkngObject)
WITH n, max(k.stamp_ns) AS seen
RETURN n.id AS id, n.data AS data, seen
ORDER BY seen DESC, id
LIMIT $limit
"""

# --- relations ------------------------------------------------------------------------------
# Two index-backed directed branches (each ordered and limited; the store merges them).
RELATIONS_OF = """
MATCH (s:VlkngObject {ns: $ns})-[e:VLKNG_REL]->(t:VlkngObject)
WHERE s.id IN $ids
RETURN s.id AS subject, e.predicate AS predicate, t.id AS object, e.stamps AS stamps,
       e.tour_id AS tour_id
ORDER BY subject, predicate, object
LIMIT $limit
UNION
MATCH (s:VlkngObject)-[e:VLKNG_REL]->(t:VlkngObject {ns: $ns})
WHERE t.id IN $ids
RETURN s.id AS subject, e.predicate AS predicate, t.id AS object, e.stamps AS stamps,
       e.tour_id AS tour_id
ORDER BY subject, predicate, object
LIMIT $limit
"""

RELATIONS_PAGE = """
MATCH (s:VlkngObject {ns: $ns})-[e:VLKNG_REL]->(t:VlkngObject)
RETURN s.id AS subject, e.predicate AS predicate, t.id AS object, e.stamps AS stamps,
       e.tour_id AS tour_id
ORDER BY subject, predicate, object
SKIP $skip
LIMIT $limit
"""

COUNT_RELATIONS = """
MATCH (:VlkngObject {ns: $ns})-[e:VLKNG_REL]->()
RETURN count(e) AS n
"""

# --- meta -----------------------------------------------------------------------------------
GET_META = """
MATCH (m:VlkngMeta {ns: $ns, key: $key})
RETURN m.value AS value
"""

SET_META = """
MERGE (m:VlkngMeta {ns: $ns, key: $key})
SET m.value = $value
"""

ALL_QUERIES: dict[str, str] = {name: value for name, value in dict(globals()).items()
                               if name.isupper() and isinstance(value, str)}
"""Every data statement by name (schema statements are in SCHEMA): linted by the tests."""
