"""`vlkng export`: the whole graph out, as JSON or GraphML."""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from ._common import add_config_args, config_from_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export", help="write the whole graph out (json or graphml)",
        description="Export objects (with every observation they were merged from: stamp_ns, bbox), "
                    "relations and keyframes (with poses). JSON keeps everything; GraphML is for "
                    "graph tools (Gephi, yEd, networkx).")
    p.add_argument("memory", metavar="MEMORY", help="memory directory")
    p.add_argument("--format", choices=["json", "graphml"], default="json")
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    add_config_args(p)
    p.set_defaults(func=run)


def export_json(memory) -> dict:
    g = memory.graph
    objects = []
    for o in g.iter_objects():
        d = o.to_dict()
        d["observations"] = [{"tour_id": ob.tour_id, "stamp_ns": ob.stamp_ns, "bbox": list(ob.bbox),
                              "chunk_id": ob.chunk_id} for ob in o.observations]
        objects.append(d)
    return {"format": "vlkng-graph/1", "tours": g.tours(), "objects": objects,
            "relations": [r.to_dict() for r in g.iter_relations()],
            "keyframes": [k.to_dict() for k in g.keyframes()]}


def export_graphml(data: dict) -> bytes:
    ns = "http://graphml.graphdrawing.org/xmlns"
    root = ET.Element("graphml", xmlns=ns)
    node_keys = ["label", "description", "attributes", "affordances", "x", "y", "first_seen_ns",
                 "last_seen_ns", "observations", "tours"]
    for k in node_keys:
        ET.SubElement(root, "key", id=k, attrib={"for": "node", "attr.name": k, "attr.type": "string"})
    for k in ("predicate", "stamps"):
        ET.SubElement(root, "key", id=k, attrib={"for": "edge", "attr.name": k, "attr.type": "string"})
    graph = ET.SubElement(root, "graph", id="vlkng", edgedefault="directed")
    for o in data["objects"]:
        n = ET.SubElement(graph, "node", id=o["id"])
        pos = o.get("position") or [None, None]
        values = {"label": o["label"], "description": o["description"],
                  "attributes": json.dumps(o["attributes"]), "affordances": json.dumps(o["affordances"]),
                  "x": pos[0], "y": pos[1], "first_seen_ns": o["first_seen_ns"],
                  "last_seen_ns": o["last_seen_ns"], "observations": len(o["observations"]),
                  "tours": json.dumps(o["tours"])}
        for k, v in values.items():
            if v is not None:
                ET.SubElement(n, "data", key=k).text = str(v)
    for i, r in enumerate(data["relations"]):
        e = ET.SubElement(graph, "edge", id=f"e{i}", source=r["subject"], target=r["object"])
        ET.SubElement(e, "data", key="predicate").text = r["predicate"]
        ET.SubElement(e, "data", key="stamps").text = json.dumps(r["stamps"])
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def run(args: argparse.Namespace) -> int:
    from ..core.memory import Memory

    with Memory.open(args.memory, config_from_args(args), read_only=True) as memory:
        data = export_json(memory)
    payload = (json.dumps(data, indent=1).encode() if args.format == "json" else export_graphml(data))
    if args.output:
        Path(args.output).write_bytes(payload)
        print(f"wrote {len(data['objects'])} objects, {len(data['relations'])} relations to {args.output}",
              file=sys.stderr)
    else:
        sys.stdout.buffer.write(payload)
        sys.stdout.write("\n")
    return 0
